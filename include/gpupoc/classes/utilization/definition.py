"""The utilization class: no probe beside the wave; its collector reads the monitoring series."""

from __future__ import annotations

from gpupoc.classes.definition import COMMON_TABLES, ClassDefinition
from gpupoc.classes.utilization.collector import collect_utilization
from gpupoc.common.test_classes import TestClass

DEFINITION = ClassDefinition(
    TestClass.UTILIZATION, ("utilization", "capacity"), (), collect_utilization,
    (*COMMON_TABLES, "utilization"), "allocated vs used GPU-hours")
