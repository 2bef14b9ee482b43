"""An administrator's quota change: made and restored through the ledger, a refused patch reported."""

from __future__ import annotations

from gpupoc.classes.audit_trail.quota_change import change_quota, restore_quota
from gpupoc.pipeline.audit import Ledger, LedgerCaller
from gpupoc.pipeline.k8s import Actor, Response

ADMIN = Actor("admin", "kubernetes-admin", ("system:masters",))


def _quota(gpus: str) -> Response:
    return Response(200, {"kind": "ResourceQuota", "metadata": {"name": "team-a-gpu"},
                          "spec": {"hard": {"requests.nvidia.com/gpu": gpus}}})


def test_admin_quota_change_is_recorded_and_restored(tmp_path, fake_caller):
    admin = fake_caller("admin")
    state = {"gpus": "16"}

    def patch(path, query, body):
        state["gpus"] = body["spec"]["hard"]["requests.nvidia.com/gpu"]
        return _quota(state["gpus"])

    admin.on("GET", r"/api/v1/namespaces/team-a/resourcequotas/team-a-gpu", lambda *a: _quota(state["gpus"]))
    admin.on("PATCH", r"/api/v1/namespaces/team-a/resourcequotas/team-a-gpu", patch)
    ledger = Ledger(tmp_path / "l.jsonl")
    c = LedgerCaller(admin, ADMIN, ledger)
    change = change_quota(c, "team-a", "team-a-gpu", 20)
    assert (change.old_gpus, change.new_gpus, change.change_status, state["gpus"]) == ("16", "20", 200, "20")
    restore_quota(c, change)
    assert change.restored and state["gpus"] == "16"
    patches = [e for e in ledger.entries if e.verb == "patch"]
    assert [e.seq for e in patches] == [change.change_seq, change.restore_seq]


def test_quota_change_reports_a_refused_patch(tmp_path, fake_caller, k8s_status):
    admin = fake_caller("admin")
    admin.on("GET", r".*/resourcequotas/q", _quota("8"))
    admin.on("PATCH", r".*/resourcequotas/q", k8s_status(403, "cannot patch"))
    change = change_quota(LedgerCaller(admin, ADMIN, Ledger(tmp_path / "l.jsonl")), "team-a", "q", 9)
    assert change.change_status == 403 and change.new_gpus == "" and "403" in change.message
