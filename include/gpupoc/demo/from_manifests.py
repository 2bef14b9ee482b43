"""``gpupoc demo --cluster-from-manifests``: the demo's cluster starts empty and is given the plan as a real
cluster would be: ``gpupoc cluster manifests`` applied with real ``kubectl``, the identities' kubeconfig from
``kubectl create token``, then ``gpupoc preflight``, which must pass before any class runs.

The identities' kubeconfig goes into the simulated cluster's data directory (``DemoPaths.manifests_kubeconfig``),
so the plan names the simulated cluster and keeps its ``sim`` injector. The monitoring stack has just started:
a user runs the preflight once Prometheus has scraped the cluster and found its Alertmanager, so while only
those checks fail the preflight is asked again, up to ``MONITORING_WARMUP_SECONDS``.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from gpupoc.cluster.kubeconfig import KubectlAdmin, write_plan_kubeconfig
from gpupoc.cluster.manifests import render_manifests
from gpupoc.exceptions import GpupocError
from gpupoc.plan import load_plan
from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.model import PreflightReport
from gpupoc.preflight.runner import run_preflight

# The checks a freshly started monitoring stack passes on its own once it has scraped the cluster and loaded
# its Alertmanager: the series of every pool node, Prometheus sending to Alertmanager.
MONITORING_WARMUP_CHECKS = frozenset({"prometheus.series", "alerting"})
MONITORING_WARMUP_SECONDS = 180.0


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
    report = preflight_once_monitoring_is_up(
        lambda: run_preflight(PreflightContext(load_plan(plan_file), use_airflow=False, stack_dir=stack_dir)), out)
    seconds["preflight"] = time.monotonic() - t0
    failures = report.failures
    out(f"        gpupoc preflight: {len(report.results) - len(failures)} of {len(report.results)} passed "
        f"in {seconds['preflight']:.1f} s")
    if failures:
        raise GpupocError("the preflight failed on the demo's cluster:\n" + "\n".join(r.line() for r in failures))
    return seconds


def preflight_once_monitoring_is_up(run: Callable[[], PreflightReport], out: Callable[[str], None],
                                    warmup_seconds: float = MONITORING_WARMUP_SECONDS, poll: float = 3.0,
                                    clock: Callable[[], float] = time.monotonic,
                                    sleep: Callable[[float], None] = time.sleep) -> PreflightReport:
    """``run()`` again while its only failures are ``MONITORING_WARMUP_CHECKS`` and ``warmup_seconds`` have not
    passed; the last report (any other failure ends the wait at once)."""
    deadline = clock() + warmup_seconds
    report = run()
    said = False
    while (report.failures and {r.check for r in report.failures} <= MONITORING_WARMUP_CHECKS
           and clock() < deadline):
        if not said:
            out(f"        waiting up to {warmup_seconds:.0f} s for the monitoring stack's first scrape of the "
                f"cluster ({', '.join(sorted({r.check for r in report.failures}))})")
            said = True
        sleep(poll)
        report = run()
    return report
