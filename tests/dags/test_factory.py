"""The class DAGs' factory: a table of task builders (``TASKS``) and a table of orderings (``AFTER``)."""

from __future__ import annotations

import pytest

from gpupoc.dags import factory
from gpupoc.classes.registry import DEFINITIONS


def _names(names: str | tuple[str, ...]) -> tuple[str, ...]:
    return (names,) if isinstance(names, str) else names


def test_every_ordering_names_tasks_of_the_table_and_each_task_is_built_once():
    built = [name for name, _ in factory.TASKS]
    assert len(built) == len(set(built)), f"a task built twice: {sorted(n for n in built if built.count(n) > 1)}"
    ordered = {n for before, after in factory.AFTER for n in (*_names(before), *_names(after))}
    assert ordered - set(built) == set(), f"AFTER names tasks TASKS never builds: {sorted(ordered - set(built))}"


def test_an_ordering_never_puts_a_task_before_one_built_ahead_of_it_in_the_table():
    """The table is in the order the run goes, so a reader follows the run down it."""
    index = {name: i for i, (name, _) in enumerate(factory.TASKS)}
    backwards = [(b, a) for before, after in factory.AFTER for b in _names(before) for a in _names(after)
                 if index[b] > index[a]]
    assert backwards == [], f"orderings against the table's order: {backwards}"


@pytest.mark.parametrize("test_class", [tc.value for tc in DEFINITIONS])
def test_each_class_dag_has_the_table_s_tasks_and_its_own_probes(test_class):
    dag = factory.build_dag(test_class, "doc")
    probes = {task_id for task_id, _ in DEFINITIONS[next(tc for tc in DEFINITIONS if tc.value == test_class)].probes}
    mapped_inputs = {"bulk_shards"}  # the shard list bulk_shard maps over, built with it
    expected = {name for name, _ in factory.TASKS} - {"probes"} | probes | mapped_inputs
    assert set(dag.task_ids) == expected, (f"poc_{test_class}: extra {sorted(set(dag.task_ids) - expected)}, "
                                           f"missing {sorted(expected - set(dag.task_ids))}")
