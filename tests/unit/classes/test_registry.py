"""One folder per test class: each class's definition is found by the registry and lives in its own folder."""

from __future__ import annotations

from gpupoc.classes.registry import DEFINITIONS, definition
from gpupoc.common.test_classes import TestClass


def test_every_test_class_has_a_definition_found_by_name_or_enum():
    assert set(DEFINITIONS) == set(TestClass)
    assert definition("audit_trail") is definition(TestClass.AUDIT_TRAIL)


def test_each_definition_lives_in_its_own_class_folder():
    for test_class, d in DEFINITIONS.items():
        steps = [step for _, step in d.probes] + ([d.collector] if d.collector else [])
        own = [s for s in steps if s.__module__.startswith(f"gpupoc.classes.{test_class.value}.")]
        assert own, f"{test_class.value}: no probe or collector of its own under gpupoc/classes/{test_class.value}/"


def test_the_audit_class_operator_submits_the_artifact_producer_too():
    assert definition(TestClass.AUDIT_TRAIL).roles == ("wave", "artifact-producer")
    assert definition(TestClass.QUEUE_CONGESTION).roles == ("wave",)


def test_every_collector_takes_what_collection_hands_it():
    """``steps.collect`` calls a class's collector with the run, the timelines, the runs and what collection
    already read: a collector that takes fewer fails that class's collect_evidence."""
    from inspect import signature

    from gpupoc.classes.definition import CollectedSoFar

    collectors = {t.value: d.collector for t, d in DEFINITIONS.items() if d.collector}
    assert len(collectors) == len(TestClass), "every class collects its own tables"
    for name, collector in collectors.items():
        signature(collector).bind(object(), [], [], CollectedSoFar())  # raises TypeError when it cannot
