"""How long each DAG file takes to parse in a fresh interpreter that has Airflow's SDK and the
KubernetesPodOperator loaded already (as the dag-processor has): the median of three runs per file.

    .venv/bin/python bench/dag_parse.py [--runs 3]
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

DAGS = Path(__file__).resolve().parents[1] / "dags"
TIMER = r"""
import json, sys, time
import airflow.sdk
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator  # the dag-processor has it
import runpy
t = time.perf_counter()
runpy.run_path(sys.argv[1])
print(json.dumps({"seconds": time.perf_counter() - t}))
"""


def parse_seconds(path: Path) -> float:
    res = subprocess.run([sys.executable, "-c", TIMER, str(path)], capture_output=True, text=True, timeout=300,
                         check=True)
    return json.loads(res.stdout.strip().splitlines()[-1])["seconds"]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=3)
    args = ap.parse_args()
    print(f"{'dag file':<28} median parse seconds of {args.runs} (min, max)")
    for path in sorted(DAGS.glob("poc_*.py")):
        times = [parse_seconds(path) for _ in range(args.runs)]
        print(f"{path.name:<28} {statistics.median(times):.3f} ({min(times):.3f}, {max(times):.3f})")


if __name__ == "__main__":
    main()
