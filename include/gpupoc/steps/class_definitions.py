"""One declarative definition per test class: everything that varies by class is read from here.

Adding a class means one definition here and its probe module under ``probes/``; adding a check to a class
means one expectation in its suite under ``expectations/`` (the suite names the class and the report item).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from gpupoc.plan.classes import TestClass
from gpupoc.steps.probes.audit import artifact_hand_over, collect_audit, quota_change
from gpupoc.steps.probes.congestion import collect_congestion
from gpupoc.steps.probes.faults import collect_fault_recovery, inject_faults
from gpupoc.steps.probes.isolation import (
    collect_isolation,
    isolation_probes,
    sample_quotas,
)
from gpupoc.steps.probes.memory_isolation import memory_isolation_probe
from gpupoc.steps.probes.reclaim import reclaim_probe
from gpupoc.steps.probes.services import fail_service_nodes, scale_services
from gpupoc.steps.probes.utilization import collect_utilization
from gpupoc.steps.probes.vgpu_slices import vgpu_slices_probe

Step = Callable[..., dict]
COMMON_TABLES = ("workload_runs", "queue_snapshots", "platform_info")


@dataclass(frozen=True)
class ClassDefinition:
    """What one test class adds to the shared run: its DAG tags, the wave-item roles the operator submits
    (``TestClass.operator_roles``), its probes (task id, step), its collector and the tables it must produce,
    and the evidence Asset it publishes for the report."""

    test_class: TestClass
    tags: tuple[str, ...]
    probes: tuple[tuple[str, Step], ...]
    collector: Callable[..., dict] | None
    tables: tuple[str, ...]
    key_figure: str  # the one figure the report's summary shows for the class

    @property
    def roles(self) -> tuple[str, ...]:
        return self.test_class.operator_roles

    @property
    def dag_id(self) -> str:
        return self.test_class.dag_id

    @property
    def asset_name(self) -> str:
        return f"gpupoc_evidence_{self.test_class.value}"

    @property
    def asset_uri(self) -> str:
        return f"gpupoc://evidence/{self.test_class.value}"


DEFINITIONS: dict[TestClass, ClassDefinition] = {p.test_class: p for p in (
    ClassDefinition(TestClass.QUEUE_CONGESTION, ("congestion", "queue", "gangs"), (), collect_congestion,
                 (*COMMON_TABLES, "explanations", "gang_placements"), "waits explained"),
    # reclaim_probe runs after the wave (a no-op without test_classes.tenant_isolation.reclaim);
    # memory_isolation_probe after both, on a shared card (nothing to provoke where no node shares its GPUs);
    # vgpu_slices_probe beside it, on another node's card (nothing to provoke where no node slices GPU memory)
    ClassDefinition(TestClass.TENANT_ISOLATION, ("isolation", "quota", "rbac", "fair-share"),
                 (("isolation_probes", isolation_probes), ("sample_quotas", sample_quotas),
                  ("reclaim_probe", reclaim_probe), ("memory_isolation_probe", memory_isolation_probe),
                  ("vgpu_slices_probe", vgpu_slices_probe)),
                 collect_isolation, (*COMMON_TABLES, "access_probes", "quota_samples", "memory_isolation",
                                     "vgpu_slices"),
                 "cross-tenant attempts denied"),
    ClassDefinition(TestClass.UTILIZATION, ("utilization", "capacity"), (), collect_utilization,
                 (*COMMON_TABLES, "utilization"), "allocated vs used GPU-hours"),
    # injections are submitted and watched by inject_faults; fail_service_nodes fails a node under a serving
    # replica beside them (a no-op without service_failures)
    ClassDefinition(TestClass.FAULT_RECOVERY, ("faults", "recovery"),
                 (("inject_faults", inject_faults), ("fail_service_nodes", fail_service_nodes)),
                 collect_fault_recovery,
                 (*COMMON_TABLES, "failure_records", "alerts"), "failure chains complete"),
    # artifact_hand_over starts the consumer once there is an artifact; scale_services has each tenant scale its
    # service up and back (a no-op without services)
    ClassDefinition(TestClass.AUDIT_TRAIL, ("audit", "operations"),
                 (("quota_change", quota_change), ("artifact_hand_over", artifact_hand_over),
                  ("scale_services", scale_services)), collect_audit,
                 (*COMMON_TABLES, "ledger", "audit_matches", "artifacts"), "ledger actions in the audit log"),
)}


def definition(test_class: TestClass | str) -> ClassDefinition:
    """The definition of a class (by enum or name)."""
    return DEFINITIONS[TestClass(test_class)]
