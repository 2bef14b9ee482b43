"""The audit-and-operations class: ``artifact_hand_over`` starts the consumer once there is an artifact;
``scale_services`` has each tenant scale its service up and back (a no-op without services)."""

from __future__ import annotations

from gpupoc.classes.audit_trail.probes import artifact_hand_over, collect_audit, quota_change
from gpupoc.classes.definition import COMMON_TABLES, ClassDefinition
from gpupoc.common.test_classes import TestClass
from gpupoc.steps.probes.services import scale_services

DEFINITION = ClassDefinition(
    TestClass.AUDIT_TRAIL, ("audit", "operations"),
    (("quota_change", quota_change), ("artifact_hand_over", artifact_hand_over), ("scale_services", scale_services)),
    collect_audit, (*COMMON_TABLES, "ledger", "audit_matches", "artifacts"), "ledger actions in the audit log")
