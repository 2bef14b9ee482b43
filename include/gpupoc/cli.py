"""The ``gpupoc`` command line. Each area registers its own sub-commands lazily."""

from __future__ import annotations

import argparse
import importlib
import sys

from gpupoc.exceptions import GpupocError

# sub-command name -> module exposing ``register(subparsers)``; imported only when present.
_AREAS = {
    "sim": "gpupoc.sim.cli",
    "stack": "gpupoc.monitoring.cli",
    "audit": "gpupoc.monitoring.audit_cli",
    "plan": "gpupoc.plan.cli",
    "report": "gpupoc.report.cli",
    "bundle": "gpupoc.report.bundle_cli",
    "history": "gpupoc.history.cli",
    "airflow": "gpupoc.airflow_runtime.cli",
    "demo": "gpupoc.demo.cli",
    "down": "gpupoc.demo.down",
    "cluster": "gpupoc.cluster.cli",
    "controlplane": "gpupoc.controlplane.cli",
    "preflight": "gpupoc.preflight.cli",
    "compare": "gpupoc.compare.cli",
    "compare-demo": "gpupoc.demo.compare",
}


def build_parser() -> argparse.ArgumentParser:
    """Build the top-level parser with every available area's sub-commands."""
    parser = argparse.ArgumentParser(prog="gpupoc", description=__doc__)
    sub = parser.add_subparsers(dest="area", required=True)
    for name, module in _AREAS.items():
        try:
            mod = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name and module.startswith(exc.name):
                continue
            raise
        mod.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    """Entry point: dispatch to the chosen sub-command; project errors exit 2 with their message."""
    args = build_parser().parse_args(argv)
    try:
        rc = args.func(args)
    except GpupocError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return int(rc or 0)


if __name__ == "__main__":
    sys.exit(main())
