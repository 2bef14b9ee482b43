"""The API server answers (and its version), and serves the API groups the plan's adapter needs."""

from __future__ import annotations

import re

from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline.k8s import server_version
from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.model import CheckResult, failed, not_applicable, ok
from gpupoc.preflight.registry import check

# adapter -> (group, version, what needs it, how to get it)
ADAPTER_GROUPS: dict[str, tuple[tuple[str, str, str, str], ...]] = {
    "kueue": (("kueue.x-k8s.io", "v1beta1", "LocalQueues, ClusterQueues, Workloads",
               "install Kueue (kubectl apply --server-side -f its release manifests)"),
              ("visibility.kueue.x-k8s.io", "v1beta2", "pending workloads' positions",
               "enable Kueue's visibility API (VisibilityOnDemand; its APIService must be Available)")),
    "volcano": (("scheduling.volcano.sh", "v1beta1", "Queues, PodGroups",
                 "install Volcano (its helm chart or installer/volcano-development.yaml)"),),
    "kai": (("scheduling.run.ai", "v2", "Queues", "install the KAI Scheduler (its helm chart)"),
            ("scheduling.run.ai", "v2alpha2", "PodGroups", "install the KAI Scheduler (its helm chart)")),
}


def short_reason(reason: str) -> str:
    """The OS's words inside a client library's retry wrapper ("[Errno 111] Connection refused")."""
    for pattern in (r"\[Errno -?\d+\] ([^'\")\]]+)", r"(CERTIFICATE_VERIFY_FAILED[^'\")\]]*)", r"(timed out)"):
        m = re.search(pattern, reason)
        if m:
            return m.group(1).strip().rstrip(".")
    return reason


@check("api", "the API server answers")
def api_reachable(ctx: PreflightContext) -> list[CheckResult]:
    try:
        runner = ctx.runner()
        version = server_version(runner)
    except SourceUnavailable as exc:
        return [failed("api", exc.endpoint, short_reason(exc.reason), exc.fix)]
    where = getattr(runner, "endpoint", "") or "the API server"
    return [ok("api", "", f"{where} answers: Kubernetes {version.get('gitVersion', '?')} "
                          f"({version.get('platform', '?')})")]


def served_group_versions(ctx: PreflightContext) -> set[str]:
    """``group/version`` of every API group the server's discovery lists."""
    def fetch() -> set[str]:
        r = ctx.runner().call("GET", "/apis")
        groups = (r.body or {}).get("groups") or [] if r.ok else []
        return {v.get("groupVersion", "") for g in groups for v in g.get("versions") or []}
    return ctx.memo("discovery", fetch)


@check("adapter.api", "the adapter's API groups are served")
def adapter_api_groups(ctx: PreflightContext) -> list[CheckResult]:
    adapter = ctx.plan.platform.adapter.value
    wanted = ADAPTER_GROUPS.get(adapter)
    if not wanted:
        return [not_applicable("adapter.api", "", f"adapter {adapter} needs no API group beyond Kubernetes'")]
    served = served_group_versions(ctx)
    out = []
    for group, version, what, fix in wanted:
        gv = f"{group}/{version}"
        if gv in served:
            out.append(ok("adapter.api", gv, f"served ({what})"))
        else:
            others = sorted(s for s in served if s.startswith(group + "/"))
            seen = f"; the server has {', '.join(others)}" if others else ""
            out.append(failed("adapter.api", gv, f"not served: adapter {adapter} needs it for {what}{seen}", fix))
    return out
