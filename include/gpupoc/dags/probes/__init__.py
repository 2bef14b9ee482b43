"""Class-specific probes run alongside the wave, and the collectors that turn them into evidence tables.

Each probe is ``step(ctx) -> dict`` (a small summary for XCom); what it observed goes to the run's
``files/`` or tables. They run while the class holds the cluster lease (``gpupoc.dags.lease``).
"""

from __future__ import annotations

from gpupoc.dags.probes.audit import artifact_hand_over, collect_audit, quota_change
from gpupoc.dags.probes.faults import collect_fault_recovery, inject_faults
from gpupoc.dags.probes.isolation import collect_isolation, isolation_probes, sample_quotas
from gpupoc.dags.probes.utilization import collect_utilization


# test class -> [(task id, step)]
PROBES: dict[str, list] = {
    "tenant_isolation": [("isolation_probes", isolation_probes), ("sample_quotas", sample_quotas)],
    "fault_recovery": [("inject_faults", inject_faults)],
    "audit_trail": [("quota_change", quota_change), ("artifact_hand_over", artifact_hand_over)],
}
COLLECTORS = {
    "tenant_isolation": collect_isolation,
    "fault_recovery": collect_fault_recovery,
    "audit_trail": collect_audit,
    "utilization": collect_utilization,
}
