"""What one test class adds to the shared run, as one frozen record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable

from gpupoc.common.test_classes import TestClass

Step = Callable[..., dict]


@dataclass(frozen=True)
class CollectedSoFar:
    """What ``collect_evidence`` already read from the cluster, handed to the class's collector so that it
    does not read it again (one list of the namespaces' events per collection)."""

    scheduling_events: tuple[dict, ...] = ()  # the events that say why a pod could not be scheduled

COMMON_TABLES = ("workload_runs", "queue_snapshots", "platform_info")


@dataclass(frozen=True)
class ClassDefinition:
    """A class's DAG tags, its probes (task id, step), its collector and the tables it must produce, and the
    evidence Asset it publishes for the report, and its own suite parameters (from its plan section, beside the
    shared ones); the wave-item roles its operator submits are ``TestClass.operator_roles`` (the rest its probes
    submit)."""

    test_class: TestClass
    tags: tuple[str, ...]
    probes: tuple[tuple[str, Step], ...]
    collector: Callable[..., dict] | None  # (ctx, timelines, runs, CollectedSoFar) -> summary
    tables: tuple[str, ...]
    key_figure: str  # the one figure the report's summary shows for the class
    suite_parameters: Callable[[Any], dict[str, Any]] | None = None  # the class's plan section -> its parameters

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
