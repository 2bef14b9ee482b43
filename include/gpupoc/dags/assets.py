"""The pipeline's Assets, declared once from the class definitions: each test class publishes its evidence; the
report consumes them."""

from __future__ import annotations

from airflow.sdk import Asset

from gpupoc.classes.registry import DEFINITIONS

EVIDENCE: dict[str, Asset] = {
    tc.value: Asset(name=p.asset_name, uri=p.asset_uri, group="gpupoc-evidence") for tc, p in DEFINITIONS.items()
}


def evidence_asset(test_class: str) -> Asset:
    """The evidence Asset a test class's DAG publishes (outlet) and the report DAG schedules on."""
    return EVIDENCE[str(getattr(test_class, "value", test_class))]
