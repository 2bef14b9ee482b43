"""Benchmark: validation plus report over one week of GPU metrics at 15 s for 64 GPUs (~2.6 M samples).

Prints wall time and peak memory of the pipeline (read raw samples -> aggregate to hourly buckets -> write the
utilization evidence table -> GX validation -> report) beside a plain pandas read of the same parquet file.
Each phase runs in its own process so peak RSS is its own. GX validates the aggregated table, not raw samples.
Targets: under 30 s and under 2 GiB.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_SECONDS = 30.0
TARGET_BYTES = 2 * 1024**3
GPUS, DAYS, STEP = 64, 7, 15


def _peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def phase_read(raw: Path) -> dict:
    import pandas as pd

    t0 = time.perf_counter()
    df = pd.read_parquet(raw)
    return {"rows": len(df), "seconds": time.perf_counter() - t0, "peak_rss": _peak_rss()}


def phase_pipeline(raw: Path, root: Path) -> dict:
    t = {}
    t0 = time.perf_counter()
    import pandas as pd

    from gpupoc.report import build_report
    from gpupoc.validation import synthetic as syn
    from gpupoc.validation import validate_run
    from gpupoc.validation.derived import aggregate_utilization_samples

    t["imports"] = time.perf_counter() - t0
    s = time.perf_counter()
    import great_expectations  # noqa: F401 - GX startup cost, measured on its own

    t["gx_import"] = time.perf_counter() - s
    s = time.perf_counter()
    samples = pd.read_parquet(raw)
    t["read"] = time.perf_counter() - s
    s = time.perf_counter()
    table = aggregate_utilization_samples(samples, "1h")
    n_samples = len(samples)
    del samples
    t["aggregate"] = time.perf_counter() - s
    s = time.perf_counter()
    run = syn.write_run(root, "utilization", "bench__week", {"workload_runs": syn.workload_runs(6, "utilization"),
                                                            "utilization": table})
    t["write_evidence"] = time.perf_counter() - s
    s = time.perf_counter()
    summary = validate_run(run)
    t["validate"] = time.perf_counter() - s
    s = time.perf_counter()
    res = build_report(root, out_dir=root / "report")
    t["report"] = time.perf_counter() - s
    return {"samples": n_samples, "aggregated_rows": len(table), "seconds": time.perf_counter() - t0,
            "breakdown": {k: round(v, 2) for k, v in t.items()}, "peak_rss": _peak_rss(),
            "failed_checks": summary.failed_checks, "decision": res.report.decision.value,
            "html_bytes": res.paths["html"].stat().st_size}


def setup(workdir: Path) -> tuple[Path, Path]:
    """Raw samples parquet and an evidence root holding validated small runs of the other classes."""
    from gpupoc.validation import synthetic as syn
    from gpupoc.validation import validate_run

    raw = workdir / "samples.parquet"
    syn.utilization_samples(GPUS, DAYS, STEP).to_parquet(raw, index=False)
    root = workdir / "evidence"
    for tc in ("queue_congestion", "tenant_isolation", "fault_recovery", "audit_trail"):
        validate_run(syn.write_run(root, tc, "bench__1", syn.good_tables(tc)))
    return raw, root


def _child(*args: str) -> dict:
    out = subprocess.run([sys.executable, __file__, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--phase", choices=["read", "pipeline"])
    ap.add_argument("--raw")
    ap.add_argument("--root")
    args = ap.parse_args()
    if args.phase == "read":
        print(json.dumps(phase_read(Path(args.raw))))
        return 0
    if args.phase == "pipeline":
        print(json.dumps(phase_pipeline(Path(args.raw), Path(args.root))))
        return 0
    with tempfile.TemporaryDirectory(prefix="gpupoc-bench-") as d:
        s = time.perf_counter()
        raw, root = setup(Path(d))
        print(f"setup (not timed): {time.perf_counter() - s:.1f} s, raw parquet {raw.stat().st_size / 2**20:.0f} MiB")
        base = _child("--phase", "read", "--raw", str(raw))
        pipe = _child("--phase", "pipeline", "--raw", str(raw), "--root", str(root))
    gib = 1024**3
    print(f"plain pandas read : {base['rows']:>9,} samples  {base['seconds']:6.2f} s  "
          f"peak {base['peak_rss'] / gib:.2f} GiB")
    print(f"validation+report : {pipe['samples']:>9,} samples  {pipe['seconds']:6.2f} s  "
          f"peak {pipe['peak_rss'] / gib:.2f} GiB  (GX validated {pipe['aggregated_rows']:,} aggregated rows)")
    print(f"breakdown (s)     : {pipe['breakdown']}")
    print(f"decision {pipe['decision']}, failed checks {pipe['failed_checks']}, "
          f"report.html {pipe['html_bytes']:,} bytes")
    ok = pipe["seconds"] < TARGET_SECONDS and pipe["peak_rss"] < TARGET_BYTES
    print(f"target < {TARGET_SECONDS:.0f} s and < 2 GiB: {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
