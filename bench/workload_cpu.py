"""Benchmark: what the simulated training workload costs the machine: CPU seconds per wall second.

Every GPU pod of the simulated cluster runs this loop (``gpupoc.workload.modes.train``) as a real process, so
its CPU share bounds how many pods a 2-core machine runs at once. Prints, for each --seconds, the CPU time
the loop used, the wall time it took and their ratio (the target: under 5 % of a core), median of --repeat.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, nargs="+", default=[2.0, 5.0], help="training time of each run")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    from gpupoc.workload import modes
    from gpupoc.workload.settings import parse_settings
    from gpupoc.workload.telemetry import TelemetryReporter

    print(f"training loop, CPU per wall second (target < 5 % of a core), median of {args.repeat}:")
    for seconds in args.seconds:
        runs = []
        for _ in range(args.repeat):
            s = parse_settings(["--duration", str(seconds)], {})
            rep = TelemetryReporter(None, 80, 1000)
            cpu0, wall0 = time.process_time(), time.perf_counter()
            modes.train(s, rep, seconds)
            runs.append((time.process_time() - cpu0, time.perf_counter() - wall0))
        cpu = statistics.median(c for c, _ in runs)
        wall = statistics.median(w for _, w in runs)
        print(f"  {seconds:5.1f} s of training: {cpu:6.3f} CPU-s in {wall:6.2f} s wall = {100 * cpu / wall:5.2f} % "
              "of a core")
    return 0


if __name__ == "__main__":
    sys.exit(main())
