"""``gpupoc demo --cluster-from-manifests``: the demo's cluster starts empty and is given the plan as a real
cluster would be: ``gpupoc cluster manifests`` applied with real ``kubectl``, the identities' kubeconfig from
``kubectl create token``, then ``gpupoc preflight``, which must pass before any class runs."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from gpupoc.cluster.kubeconfig import KubectlAdmin, write_plan_kubeconfig
from gpupoc.cluster.manifests import render_manifests
from gpupoc.exceptions import GpupocError
from gpupoc.plan import load_plan
from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.runner import run_preflight


def give_cluster_the_plan(plan_file: Path, sim: dict, kubeconfig: Path, stack_dir: Path,
                          out: Callable[[str], None]) -> dict[str, float]:
    """Manifests, kubeconfig, preflight against the demo's empty cluster; seconds per step."""
    seconds: dict[str, float] = {}
    admin = KubectlAdmin(sim["kubeconfig"], "admin")
    t0 = time.monotonic()
    plan = load_plan(plan_file, kubeconfig_later=True)
    applied = admin.apply(render_manifests(plan, str(plan_file)))
    seconds["manifests"] = time.monotonic() - t0
    out(f"        gpupoc cluster manifests | kubectl apply -f -: {len(applied.splitlines())} objects")
    t0 = time.monotonic()
    # Python clients (Airflow, the steps) take the cluster's plain-HTTP listener; kubectl keeps TLS
    result = write_plan_kubeconfig(plan, admin, kubeconfig, server=sim.get("http_url"))
    seconds["kubeconfig"] = time.monotonic() - t0
    out(f"        gpupoc cluster kubeconfig: {result.lines()[0]}")
    t0 = time.monotonic()
    report = run_preflight(PreflightContext(load_plan(plan_file), use_airflow=False, stack_dir=stack_dir))
    seconds["preflight"] = time.monotonic() - t0
    failures = report.failures
    out(f"        gpupoc preflight: {len(report.results) - len(failures)} of {len(report.results)} passed "
        f"in {seconds['preflight']:.1f} s")
    if failures:
        raise GpupocError("the preflight failed on the demo's cluster:\n" + "\n".join(r.line() for r in failures))
    return seconds
