"""The pipeline's Assets, declared once: each test class publishes its evidence; the report consumes them."""

from __future__ import annotations

from airflow.sdk import Asset

TEST_CLASSES = ("queue_congestion", "tenant_isolation", "utilization", "fault_recovery", "audit_trail")

EVIDENCE: dict[str, Asset] = {
    tc: Asset(name=f"gpupoc_evidence_{tc}", uri=f"gpupoc://evidence/{tc}", group="gpupoc-evidence")
    for tc in TEST_CLASSES
}


def evidence_asset(test_class: str) -> Asset:
    """The evidence Asset a test class's DAG publishes (outlet) and the report DAG schedules on."""
    return EVIDENCE[test_class]
