"""Entry point: ``python -m gpupoc.workload`` / ``gpupoc-workload``."""

from __future__ import annotations

import signal
import sys
import traceback
from typing import Sequence

from gpupoc.workload.modes import RUNNERS, eprint, log
from gpupoc.workload.serving import MODES
from gpupoc.workload.settings import Mode, parse_settings
from gpupoc.workload.telemetry import TelemetryReporter

SIGTERM_EXIT = 143


def _on_sigterm(signum, frame) -> None:  # noqa: ARG001 - signal handler signature
    log("received SIGTERM: stopping")
    raise SystemExit(SIGTERM_EXIT)


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if args and args[0] in MODES:  # serve / load (workload/serving.py)
        signal.signal(signal.SIGTERM, _on_sigterm)
        return MODES[args[0]](args[1:])
    s = parse_settings(argv)
    signal.signal(signal.SIGTERM, _on_sigterm)
    log(f"gpupoc-workload mode={s.mode.value} pod={s.namespace}/{s.pod} node={s.node or '-'} "
        f"duration={s.run_seconds:g}s gpu_util={s.gpu_util:g}% gpu_mem_mib={s.gpu_mem_mib:g}")
    log(f"NVIDIA_VISIBLE_DEVICES={s.visible_devices}")
    rep = TelemetryReporter(s.telemetry_file, s.gpu_util, s.gpu_mem_mib, seed=s.seed).start()
    try:
        rc = RUNNERS[s.mode.value](s, rep)
    except SystemExit:
        raise
    except Exception as exc:  # the fail mode and genuine errors: traceback on stderr, chosen exit code
        traceback.print_exc()
        code = s.exit_code if s.mode is Mode.FAIL else 1
        eprint(f"error: {type(exc).__name__}: {exc}")
        return code
    finally:
        rep.stop()
    log(f"done: exit code {rc}")
    return rc


if __name__ == "__main__":
    sys.exit(main())
