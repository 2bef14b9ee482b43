"""Every test class's definition, by class: everything that varies by class is read from here.

Adding a class means one folder under ``classes/`` with its ``definition.py`` and probes, and one line here;
adding a check to a class means one expectation in its suite under ``expectations/`` (the suite names the
class and the report item).
"""

from __future__ import annotations

from gpupoc.classes.audit_trail.definition import DEFINITION as AUDIT_TRAIL
from gpupoc.classes.definition import COMMON_TABLES, ClassDefinition
from gpupoc.classes.fault_recovery.definition import DEFINITION as FAULT_RECOVERY
from gpupoc.classes.queue_congestion.definition import DEFINITION as QUEUE_CONGESTION
from gpupoc.classes.tenant_isolation.definition import DEFINITION as TENANT_ISOLATION
from gpupoc.classes.utilization.definition import DEFINITION as UTILIZATION
from gpupoc.common.test_classes import TestClass

__all__ = ["COMMON_TABLES", "DEFINITIONS", "ClassDefinition", "definition"]

DEFINITIONS: dict[TestClass, ClassDefinition] = {d.test_class: d for d in (
    QUEUE_CONGESTION, TENANT_ISOLATION, UTILIZATION, FAULT_RECOVERY, AUDIT_TRAIL)}


def definition(test_class: TestClass | str) -> ClassDefinition:
    """The definition of a class (by enum or name)."""
    return DEFINITIONS[TestClass(test_class)]
