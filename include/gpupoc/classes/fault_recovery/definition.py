"""The fault-recovery class: injections submitted and watched by ``inject_faults``; ``fail_service_nodes``
fails a node under a serving replica beside them (a no-op without ``service_failures``)."""

from __future__ import annotations

from gpupoc.classes.definition import COMMON_TABLES, ClassDefinition
from gpupoc.classes.fault_recovery.probes import collect_fault_recovery, inject_faults
from gpupoc.common.test_classes import TestClass
from gpupoc.steps.probes.services import fail_service_nodes

DEFINITION = ClassDefinition(
    TestClass.FAULT_RECOVERY, ("faults", "recovery"),
    (("inject_faults", inject_faults), ("fail_service_nodes", fail_service_nodes)), collect_fault_recovery,
    (*COMMON_TABLES, "failure_records", "alerts"), "failure chains complete")
