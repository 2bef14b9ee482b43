"""An administrator's quota change: made as the administrator through the ledger, recorded, and restored."""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict

from gpupoc.kube.resources import GPU_QUOTA_KEY
from gpupoc.pipeline.audit import LedgerCaller


class QuotaChange(BaseModel):
    """An administrator's quota change: made, recorded in the ledger, restored."""

    model_config = ConfigDict(extra="forbid")

    namespace: str
    quota: str
    by: str
    changed_at: str = ""
    old_gpus: str = ""
    new_gpus: str = ""
    change_status: int = 0
    change_seq: int | None = None
    restored_at: str = ""
    restore_status: int = 0
    restore_seq: int | None = None
    restored: bool = False
    message: str = ""


def _quota_path(namespace: str, quota: str) -> str:
    return f"/api/v1/namespaces/{namespace}/resourcequotas/{quota}"


def change_quota(admin: LedgerCaller, namespace: str, quota: str, new_gpus: int | str) -> QuotaChange:
    """Patch ``spec.hard[requests.nvidia.com/gpu]`` as the administrator (recorded in the ledger)."""
    path = _quota_path(namespace, quota)
    before = admin.call("GET", path, purpose="quota change: read current value")
    row = QuotaChange(namespace=namespace, quota=quota, by=admin.actor.username)
    if not before.ok:
        row.message = f"could not read quota {namespace}/{quota}: HTTP {before.status} {before.message}"
        return row
    row.old_gpus = str(((before.body.get("spec") or {}).get("hard") or {}).get(GPU_QUOTA_KEY, ""))
    r = admin.call("PATCH", path, body={"spec": {"hard": {GPU_QUOTA_KEY: str(new_gpus)}}},
                   purpose=f"quota change: {GPU_QUOTA_KEY} {row.old_gpus} -> {new_gpus}")
    row.change_status = r.status
    row.change_seq = admin.ledger.entries[-1].seq
    row.changed_at = admin.ledger.entries[-1].at
    if r.ok:
        row.new_gpus = str(((r.body.get("spec") or {}).get("hard") or {}).get(GPU_QUOTA_KEY, ""))
    else:
        row.message = f"quota patch answered HTTP {r.status}: {r.message}"
    return row


def restore_quota(admin: LedgerCaller, change: QuotaChange) -> QuotaChange:
    """Put the old value back (recorded in the ledger); updates and returns ``change``."""
    if not change.old_gpus:
        change.message = change.message or "nothing to restore: the old value is unknown"
        return change
    r = admin.call("PATCH", _quota_path(change.namespace, change.quota),
                   body={"spec": {"hard": {GPU_QUOTA_KEY: change.old_gpus}}},
                   purpose=f"quota change: restore {GPU_QUOTA_KEY} to {change.old_gpus}")
    change.restore_status = r.status
    change.restore_seq = admin.ledger.entries[-1].seq
    change.restored_at = admin.ledger.entries[-1].at
    change.restored = r.ok
    if not r.ok:
        change.message = f"restore answered HTTP {r.status}: {r.message}; restore {change.quota} by hand"
    return change
