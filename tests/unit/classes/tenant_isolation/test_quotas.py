"""Over-quota submission, quota samples and each tenant's share of the GPU-seconds."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd

from gpupoc.classes.tenant_isolation.isolation import P1
from gpupoc.common.timefmt import rfc3339
from gpupoc.classes.tenant_isolation.quotas import (
    classify_submission, sample_quotas, submit_over_quota, tenant_shares,
)
from gpupoc.classes.tenant_isolation.table import QuotaSample
from gpupoc.pipeline.k8s import Response, service_account_actor

A = service_account_actor("team-a", "team-a", "runner")


def test_classify_submission_outcomes():
    msg = ('pods "over-quota-a" is forbidden: exceeded quota: team-a-gpu, requested: requests.nvidia.com/gpu=9, '
           'used: requests.nvidia.com/gpu=0, limited: requests.nvidia.com/gpu=8')
    assert classify_submission(403, msg, None) == ("blocked", msg)
    gated = {"spec": {"schedulingGates": [{"name": "kueue.x-k8s.io/admission"}]},
             "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                             "reason": "SchedulingGated",
                                                             "message": "Scheduling is blocked due to non-empty "
                                                                        "scheduling gates"}]}}
    assert classify_submission(201, "", gated)[0] == "queued"
    assert classify_submission(201, "", {"spec": {"nodeName": "n1"}, "status": {"phase": "Running"}})[0] == "admitted"
    approval = {"metadata": {"annotations": {"platform.example/approval": "pending"}}, "spec": {}, "status": {}}
    assert classify_submission(201, "", approval)[0] == "approval"


def _over_quota_cluster(fake_caller, answer: Response):
    c = fake_caller("team-a")
    c.on("GET", r".*/resourcequotas/team-a-gpu", Response(200, {"status": {
        "hard": {"requests.nvidia.com/gpu": "8"}, "used": {"requests.nvidia.com/gpu": "6"}}}))
    c.on("POST", r".*/pods", answer)
    c.on("GET", r".*/pods/over-quota-a", Response(200, {"metadata": {"name": "over-quota-a"},
                                                         "spec": {"nodeName": "n1"}, "status": {"phase": "Running"}}))
    c.on("DELETE", r".*", Response(200, {}))
    return c


def test_over_quota_asks_one_more_than_remaining_and_records_the_block_message(fake_caller):
    msg = 'pods "x" is forbidden: exceeded quota: team-a-gpu, requested: requests.nvidia.com/gpu=3'
    c = _over_quota_cluster(fake_caller, Response(403, {"kind": "Status", "code": 403, "message": msg}))
    seen = {}
    row = submit_over_quota(c, "team-a", "team-a", "team-a-gpu",
                            lambda name, gpus: seen.setdefault("pod", {"metadata": {"name": name}, "gpus": gpus}),
                            observe_s=0)
    assert (row.remaining_gpus, row.requested_gpus, seen["pod"]["gpus"]) == (2, 3, 3)
    assert (row.outcome, row.user_message, row.finding) == ("blocked", msg, "")


def test_over_quota_pod_that_runs_is_a_p1_and_is_cleaned_up(fake_caller):
    c = _over_quota_cluster(fake_caller, Response(201, {"metadata": {"name": "over-quota-a"}}))
    row = submit_over_quota(c, "team-a", "team-a", "team-a-gpu", lambda n, g: {"metadata": {"name": n}},
                            observe_s=1, poll_s=0.05)
    assert row.outcome == "admitted" and row.severity == P1 and "n1" in row.finding
    assert c.calls[-1][0] == "DELETE"


def test_quota_samples_flag_pods_holding_more_than_the_quota(fake_caller):
    admin = fake_caller("admin")
    admin.on("GET", r".*/resourcequotas", Response(200, {"items": [{"metadata": {"name": "team-a-gpu"}, "status": {
        "hard": {"requests.nvidia.com/gpu": "4", "pods": "10"}, "used": {"requests.nvidia.com/gpu": "4"}}}]}))
    pod = lambda n, phase: {"spec": {"nodeName": "n1", "containers": [  # noqa: E731
        {"resources": {"limits": {"nvidia.com/gpu": str(n)}}}]}, "status": {"phase": phase}}
    admin.on("GET", r".*/pods", Response(200, {"items": [pod(4, "Running"), pod(2, "Running"), pod(8, "Failed")]}))
    [s] = sample_quotas(admin, ["team-a"])
    assert (s.row.hard, s.row.used, s.pods_gpus, s.used_ratio) == (4, 4, 6, 1.0)
    assert s.finding.startswith("P1") and "6 GPU(s)" in s.finding


def test_a_quota_reading_carries_its_quota_samples_row_named_for_the_tenant(fake_caller):
    admin = fake_caller("admin")
    admin.on("GET", r".*/resourcequotas", Response(200, {"items": [{"metadata": {"name": "team-a-gpu"}, "status": {
        "hard": {"requests.nvidia.com/gpu": "4"}, "used": {"requests.nvidia.com/gpu": "1"}}}]}))
    admin.on("GET", r".*/pods", Response(200, {"items": []}))
    [s] = sample_quotas(admin, {"team-a": "vision"})
    assert isinstance(s.row, QuotaSample) and s.row.ts is not None
    assert (s.row.tenant, s.row.namespace, s.row.resource, s.row.quota, s.row.source) == (
        "vision", "team-a", "requests.nvidia.com/gpu", "team-a-gpu", "resourcequota status")


def test_an_unreadable_quota_list_is_a_not_verified_reading_with_an_empty_quota(fake_caller):
    admin = fake_caller("admin")
    admin.on("GET", r".*/resourcequotas", Response(403, {"message": "forbidden"}))
    admin.on("GET", r".*/pods", Response(200, {"items": []}))
    [s] = sample_quotas(admin, ["team-a"])
    assert (s.row.tenant, s.row.quota, s.row.hard, s.row.used) == ("team-a", "", None, None)
    assert s.finding.startswith("not verified: quota list answered HTTP 403")


def test_tenant_shares_split_gpu_seconds_and_report_wait_percentiles():
    t = datetime(2026, 3, 1, 12, tzinfo=timezone.utc)
    rows = [
        {"tenant": "a", "gpus": 4, "submitted_at": t, "started_at": t, "finished_at": t + timedelta(seconds=100)},
        {"tenant": "a", "gpus": 4, "submitted_at": t, "started_at": t + timedelta(seconds=10),
         "finished_at": t + timedelta(seconds=110)},
        {"tenant": "b", "gpus": 2, "submitted_at": rfc3339(t), "started_at": rfc3339(t + timedelta(seconds=50)),
         "finished_at": rfc3339(t + timedelta(seconds=150))},
        {"tenant": "b", "gpus": 2, "submitted_at": t, "started_at": None, "finished_at": None},
    ]
    shares = {s.tenant: s for s in tenant_shares(pd.DataFrame(rows), quotas={"a": 8, "b": 8},
                                                  now=t + timedelta(seconds=200))}
    assert shares["a"].gpu_seconds == 800 and shares["b"].gpu_seconds == 200
    assert (shares["a"].share, shares["b"].share) == (0.8, 0.2)
    assert shares["b"].entitled_share == 0.5 and shares["b"].share_vs_entitled == 0.4
    assert shares["b"].never_started == 1 and shares["b"].wait_max_s == 200
    assert shares["a"].wait_p50_s == 5
