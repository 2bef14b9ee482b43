"""The scenario: set up the tenancy, run each step (a step that fails to run is recorded ``not run: <why>``),
then find each step's requests in the audit log."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Callable

from gpupoc.fidelity import audit, steps_access, steps_pods, steps_workloads
from gpupoc.fidelity.client import Kube, from_kubeconfig
from gpupoc.fidelity.model import ScenarioResult
from gpupoc.fidelity.run import Run
from gpupoc.fidelity.setup import RUNNER, TENANT_NS, choose_target, make_tenancy, token_request

STEPS: tuple[tuple[str, Callable[[Run], None]], ...] = (
    ("forbidden", steps_access.forbidden),
    ("access_reviews", steps_access.access_reviews),
    ("token_request", steps_access.token_requests),
    ("quota", steps_access.quota),
    ("unschedulable", steps_pods.unschedulable),
    ("preemption", steps_pods.preemption),
    ("missing_image", steps_pods.missing_image),
    ("oom", steps_pods.oom),
    ("deployment", steps_workloads.deployment),
    ("watch", steps_workloads.watch),
    ("taint_eviction", steps_pods.taint_eviction),
)
STEP_NAMES = tuple(name for name, _ in STEPS)


def tenant_of(admin: Kube) -> Kube:
    """The tenant's client: a token for the tenant's ServiceAccount by TokenRequest (never written anywhere)."""
    answer = token_request(admin)
    token = (answer.body.get("status") or {}).get("token")
    if not answer.ok or not token:
        raise RuntimeError(f"TokenRequest for {TENANT_NS}/{RUNNER} answered {answer.code}: "
                           f"{answer.body.get('message', '')}")
    return admin.as_token(token)


def run_scenario(kubeconfig: Path, side: str, audit_log: Path | None, skip: dict[str, str] | None = None,
                 wait: float = 90.0, workdir: Path | None = None) -> ScenarioResult:
    """Every step through ``kubeconfig``'s current context (an administrator); ``skip`` maps a step to why
    it cannot run on this side."""
    admin = from_kubeconfig(kubeconfig, workdir=workdir)
    result = ScenarioResult(side, str(admin.get("/version").body.get("gitVersion") or ""))
    make_tenancy(admin)
    run = Run(admin, tenant_of(admin), f"system:serviceaccount:{TENANT_NS}:{RUNNER}", choose_target(admin),
              result, wait=wait)
    for name, step in STEPS:
        if skip and name in skip:
            run.rec(name).not_run = skip[name]
            continue
        try:
            step(run)
        except Exception as exc:  # noqa: BLE001 - one step that cannot run must not lose the others' records
            run.rec(name).not_run = f"{type(exc).__name__}: {exc}"[:300]
    time.sleep(1.0)  # the audit log's last lines are written after the answers
    audit.record(result, [m for m in run.marks if not result.steps[m.step].not_run], audit.read_log(audit_log),
                 str(audit_log))
    return result
