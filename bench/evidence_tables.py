"""Benchmark: how long the evidence writer's schema conversion takes for large tables.

Every table a test class collects goes through ``gpupoc.evidence.schema.to_arrow`` before it is written; a
week of utilization buckets from a large cluster is hundreds of thousands of rows. Prints, for each --rows,
the conversion time of a pandas frame and of a list of row dicts (the two shapes collectors hand over),
median of --repeat.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from typing import Callable


def _median(fn: Callable[[], object], repeat: int) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, nargs="+", default=[200_000, 1_000_000])
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    import numpy as np
    import pandas as pd

    from gpupoc.evidence import to_arrow

    print(f"to_arrow('utilization', ...), median of {args.repeat}:")
    for n in args.rows:
        df = pd.DataFrame({"bucket": pd.date_range("2026-11-30", periods=n, freq="15s", tz="UTC"),
                           "namespace": np.where(np.arange(n) % 2, "team-nlp", "team-vision"),
                           "util_avg": np.random.default_rng(0).uniform(0, 100, n), "samples": np.full(n, 4)})
        frame_s = _median(lambda: to_arrow("utilization", df), args.repeat)
        rows = df.to_dict("records")
        rows_s = _median(lambda: to_arrow("utilization", rows), args.repeat)
        print(f"  {n:>9,} rows: frame {frame_s:6.2f} s, row dicts {rows_s:6.2f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
