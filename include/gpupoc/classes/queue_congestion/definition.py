"""The queue-congestion class: no probe beside the wave; its collector reconstructs every wait."""

from __future__ import annotations

from gpupoc.classes.definition import COMMON_TABLES, ClassDefinition
from gpupoc.classes.queue_congestion.collector import collect_congestion
from gpupoc.common.test_classes import TestClass

DEFINITION = ClassDefinition(
    TestClass.QUEUE_CONGESTION, ("congestion", "queue", "gangs"), (), collect_congestion,
    (*COMMON_TABLES, "explanations", "gang_placements"), "waits explained")
