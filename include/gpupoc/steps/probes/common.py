"""Helpers the class probes share: waiting for the release or another task's marker, the tenant's GPU quota,
plain pod manifests, the monitoring sources. The wave's end is ``steps.wave_end``."""

from __future__ import annotations

from typing import TYPE_CHECKING

import time
from contextlib import contextmanager

from gpupoc.kube.resources import GPU_QUOTA_KEY
from gpupoc.steps.markers import RELEASE_FILE

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext


def wait_for_file(ctx: RunContext, name: str, timeout_s: float, poll_s: float = 2.0) -> bool:
    """Until another task of the run has written its marker file ``files/<name>.json`` (False: it never did)."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ctx.files(name).is_file():
            return True
        time.sleep(poll_s)
    return False


def wait_for_release(ctx: RunContext, timeout_s: float, poll_s: float = 2.0) -> bool:
    """Until the release task has lifted the gate (release.json written), so probes see the wave running."""
    return wait_for_file(ctx, RELEASE_FILE, timeout_s, poll_s)


def gpu_quota_name(admin, namespace: str) -> str:
    r = admin.call("GET", f"/api/v1/namespaces/{namespace}/resourcequotas")
    for q in (r.body or {}).get("items") or [] if r.ok else []:
        if GPU_QUOTA_KEY in ((q.get("spec") or {}).get("hard") or {}):
            return q["metadata"]["name"]
    return f"{namespace}-gpu"


def probe_manifest(ctx: RunContext, workload: str, tenant: str, name: str, gpus: int | None = None,
                   role: str = "probe") -> dict:
    """A plain pod manifest from the plan's pod builder (no wave gate: probes submit and watch directly)."""
    from kubernetes.client import ApiClient

    from gpupoc.podspec.build import build_pod

    pod = build_pod(ctx.plan.workload(workload), ctx.plan.tenant(tenant), ctx.plan, run_id=ctx.run_id,
                    test_class=ctx.test_class, wave_gate=False, name=name, role=role)
    body = ApiClient().sanitize_for_serialization(pod)
    if gpus is not None:
        res = body["spec"]["containers"][0].setdefault("resources", {})
        for k in ("requests", "limits"):
            res.setdefault(k, {})["nvidia.com/gpu"] = str(gpus)
    return body


def monitoring_sources(ctx: RunContext):
    """The monitoring locations (plan, Airflow connections, local stack), or None when none resolve."""
    try:
        from gpupoc.monitoring.sources import resolve_sources

        return resolve_sources(plan_sources=ctx.plan.evidence_sources)
    except Exception:  # noqa: BLE001 - no monitoring: what needs it is recorded as not verified
        return None


@contextmanager
def waiting(ctx: RunContext, what: str, seconds: float):
    """Tell the demo (``gpupoc.pipeline.waits``) that this task waits for ``what`` at most ``seconds``."""
    from gpupoc.pipeline import waits

    waits.write_note(ctx.run_dir, ctx.task or "probe", what, seconds)
    try:
        yield
    finally:
        waits.clear_note(ctx.run_dir, ctx.task or "probe")
