"""The five test classes of the method: each is one Airflow DAG, one section of the plan, one part of the report."""

from __future__ import annotations

from enum import Enum


class TestClass(str, Enum):
    """The five test classes of the method, in the order the report lists them."""

    QUEUE_CONGESTION = "queue_congestion"
    TENANT_ISOLATION = "tenant_isolation"
    UTILIZATION = "utilization"
    FAULT_RECOVERY = "fault_recovery"
    AUDIT_TRAIL = "audit_trail"

    __test__ = False  # not a pytest test class

    @property
    def dag_id(self) -> str:
        return f"poc_{self.value}"

    @property
    def operator_roles(self) -> tuple[str, ...]:
        """The wave-item roles the class's operator submits (the rest its probes submit)."""
        return ("wave", "artifact-producer") if self is TestClass.AUDIT_TRAIL else ("wave",)
