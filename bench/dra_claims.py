"""DRA claims allocated per second by the real kube-scheduler v1.37 (``make control-plane``'s binaries) on KWOK
nodes that publish DRA GPUs (``gpupoc controlplane up --dra``).

A wave: one ResourceClaimTemplate asking one whole card, and ``--claims`` pods using it, created by one
``kubectl apply``; kube-controller-manager makes each pod's claim, kube-scheduler allocates a card and binds
the pod. The wave's time runs from the apply's start to the moment every claim holds a device (polled every
0.2 s); ``claims_made_s`` is when kube-controller-manager had made them all. ``--runs`` waves, each in a fresh namespace after the previous one's claims are gone; the median is
printed last.

    PYTHONPATH=include .venv/bin/python bench/dra_claims.py --claims 200 --nodes 50 --runs 3
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import yaml

from gpupoc.controlplane import start_control_plane
from gpupoc.controlplane.dra import allocated_devices, claim_pod, claim_template
from gpupoc.controlplane.flags import Features
from gpupoc.plan import DEFAULT_PLAN, load_plan
from gpupoc.plan.model import Pool

POLL = 0.2


def claims(cp, ns: str) -> list[dict]:
    return json.loads(cp.run_kubectl("get", "resourceclaims", "-n", ns, "-o", "json", timeout=120).stdout)["items"]


def wave(cp, ns: str, count: int) -> dict:
    """One wave in namespace ``ns``: the seconds until every claim was allocated, and the claims per second."""
    cp.run_kubectl("create", "namespace", ns)
    cp.run_kubectl("apply", "-f", "-", input=yaml.safe_dump(claim_template("gpu", ns)))
    pods = yaml.safe_dump_all([claim_pod(f"c{i}", ns, "gpu") for i in range(count)])
    t0 = time.monotonic()
    cp.run_kubectl("apply", "-f", "-", input=pods, timeout=600)
    created = time.monotonic() - t0
    allocated, made = 0, None
    while allocated < count:
        time.sleep(POLL)
        now = claims(cp, ns)
        allocated = sum(1 for c in now if allocated_devices(c))
        if made is None and len(now) == count:
            made = time.monotonic() - t0
        if time.monotonic() - t0 > 600:
            raise SystemExit(f"{ns}: only {allocated} of {count} claims allocated after 600 s")
    seconds = time.monotonic() - t0
    return {"namespace": ns, "claims": count, "pods_created_s": round(created, 2),
            "claims_made_s": round(made if made is not None else seconds, 2), "allocated_s": round(seconds, 2),
            "claims_per_s": round(count / seconds, 1)}


def clear(cp, ns: str) -> None:
    cp.run_kubectl("delete", "pods", "--all", "-n", ns, "--grace-period=0", "--force", timeout=600, check=False)
    while claims(cp, ns):
        time.sleep(1)
    cp.run_kubectl("delete", "namespace", ns, "--wait=false")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--claims", type=int, default=200)
    ap.add_argument("--nodes", type=int, default=50)
    ap.add_argument("--gpus-per-node", type=int, default=8)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--dir", type=Path, help="the control plane's directory (default: a temporary one)")
    a = ap.parse_args(argv)
    if a.claims > a.nodes * a.gpus_per_node:
        ap.error(f"--claims {a.claims}: more than the {a.nodes * a.gpus_per_node} cards of --nodes x --gpus-per-node")
    plan = load_plan(DEFAULT_PLAN)
    pool = Pool.model_validate({**plan.pool("training").model_dump(), "nodes": a.nodes,
                                "gpus_per_node": a.gpus_per_node, "node_names": []})
    root = a.dir or Path(tempfile.mkdtemp(prefix="dra-bench-"))
    cp = start_control_plane(root, pools=[pool], plan=plan, process_runner=False, features=Features(dra=True))
    try:
        print(f"kube-scheduler {cp.version}: {a.nodes} KWOK nodes x {a.gpus_per_node} DRA cards "
              f"(published in {cp.timings.get('dra published', 0):.1f} s)", flush=True)
        results = []
        for r in range(a.runs):
            res = wave(cp, f"wave-{r}", a.claims)
            print(json.dumps(res), flush=True)
            results.append(res)
            clear(cp, res["namespace"])
    finally:
        cp.stop()
    rates = [r["claims_per_s"] for r in results]
    print(f"median: {statistics.median(rates)} claims allocated/s ({a.claims} claims on {a.nodes} nodes, "
          f"runs {rates})", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
