"""Access attempts, over-quota submissions and quota samples become the class's table rows and pass their Arrow
schemas."""

from __future__ import annotations

from gpupoc.classes.tenant_isolation import rows as ev
from gpupoc.classes.tenant_isolation.isolation import AccessAttempt
from gpupoc.classes.tenant_isolation.quotas import OverQuotaResult, QuotaReading
from gpupoc.classes.tenant_isolation.table import QuotaSample
from gpupoc.common.timefmt import parse_time
from gpupoc.evidence import to_arrow
from gpupoc.kube.resources import GPU_QUOTA_KEY

AT = "2026-03-01T12:00:00.000001Z"


def test_access_attempts_and_over_quota_become_access_probes():
    leaked = AccessAttempt(actor="team-a", actor_username="system:serviceaccount:team-a:runner",
                           target_namespace="team-b", action="read_logs", verb="get", resource="pods",
                           subresource="log", name="p", at=AT, http_status=200, allowed=True, message="200: text",
                           sar_allowed=False, finding="could get pods/log", severity="P1", audit_matched=None)
    over = OverQuotaResult(tenant="team-a", namespace="team-a", quota="q", pod="o", at=AT, remaining_gpus=2,
                           requested_gpus=3, http_status=403, outcome="blocked", user_message="exceeded quota")
    rows = ev.access_probes([leaked], [over])
    table = to_arrow("access_probes", rows)
    assert table.num_rows == 2
    a, b = table.to_pylist()
    assert (a["allowed"], a["expected_allowed"], a["access_review_allowed"]) == (True, False, False)
    assert a["message"] == "200: text" and a["at"] is not None
    assert (b["action"], b["allowed"]) == ("over_quota_blocked", False) and "exceeded quota" in b["message"]


def _reading(quota: str = "q", **kw) -> QuotaReading:
    return QuotaReading(row=QuotaSample(ts=parse_time(AT), tenant="vision", namespace="team-a", resource=GPU_QUOTA_KEY,
                                        hard=8, used=4, quota=quota, source="resourcequota status"), **kw)


def test_quota_samples_split_into_gpu_pods_and_held_rows():
    s = _reading(pods_gpus=4, hard_pods=60, used_pods=2)
    rows = to_arrow("quota_samples", ev.quota_samples([s])).to_pylist()
    assert [(r["resource"], r["used"], r["tenant"], r["source"]) for r in rows] == [
        ("requests.nvidia.com/gpu", 4.0, "vision", "resourcequota"), ("pods", 2.0, "vision", "resourcequota"),
        ("nvidia.com/gpu held", 4.0, "vision", "bound pods' GPU requests")]
    assert ev.quota_samples([_reading(quota="", finding="not verified")]) == []


def test_the_sampling_task_s_quota_rows_name_the_tenant_and_the_quota_status():
    [row] = to_arrow("quota_samples", ev.sampled_quotas([_reading()])).to_pylist()
    assert (row["tenant"], row["resource"], row["hard"], row["used"], row["source"]) == (
        "vision", "requests.nvidia.com/gpu", 8.0, 4.0, "resourcequota status")
    assert row["ts"] is not None
