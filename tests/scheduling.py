"""How the tests of `make test` are handed to its pytest-xdist workers (``--dist loadgroup``).

A worker takes one unit of work at a time: the tests of one ``xdist_group``, or else a single test. Two rules
on top of the groups the modules name:

- **Tests that share a module-scoped fixture run on one worker.** Such a fixture runs once per worker that
  runs one of its tests: spread over workers, ``test_bulk_submission.py``'s 200-pod waves ran twice and
  ``test_real_cluster.py``'s prepared clusters three times. The tests of a module without an ``xdist_group``
  of their own that use a module-scoped fixture of this tree (defined in the module or in a conftest) get
  one group per set of such fixtures they share; tests that use none stay free.
- **The longest work starts first.** ``make test`` passes ``--no-loadscope-reorder``, so units are handed
  out in collection order, and this order puts the modules of ``LONGEST`` first (the longest units of the
  measured runs in docs/testing.md, longest first), then the other integration tests, then the quick unit
  tests that fill the workers' gaps at the end. An order asserts nothing: a module missing from the list
  only starts later.
- **A long unit never waits behind another long one.** An xdist worker runs a test only once it holds the
  next one, so the scheduler hands a worker its next unit while its last test or two still run. Plain
  ``loadgroup`` hands out the head of the queue then: a long integration unit queued behind a worker's last
  long test (the demo's second demo, one of the five demo options) waited there for minutes while other
  workers were free. ``LongPolesApart`` gives a worker still busy with integration tests a quick unit from
  the tail of the queue instead, so the next long unit goes to a worker that is free for it. When only
  integration units are left it hands out the head, as ``loadgroup`` does.
"""

from __future__ import annotations

from pathlib import Path

import pytest

TESTS = Path(__file__).resolve().parent

# The longest units of `make test`, longest first (a group is placed by its first module here).
LONGEST = [
    "integration/test_bulk_submission.py",
    "integration/test_demo.py",
    "integration/test_kwok_demo.py",              # five classes on the real control plane
    "integration/test_adapter_plans.py",
    "integration/test_celery_topology.py",        # airflow-restarts, with test_restart_resilience.py
    "integration/test_attempt_outcomes.py",
    "integration/test_verdict_stability.py",
    "integration/test_class_verdict_stability.py",  # sixteen class runs, eight at a time
    "integration/test_demo_options.py",           # five demos started one after the other (8:18 alone)
    "integration/test_report_signoff.py",         # airflow, with the preemption, postgres and KPO tests
    "integration/test_services.py",
    "integration/test_access_table.py",
    "integration/test_audit_webhook_class.py",
    "integration/test_fault_class_injectors.py",
    "integration/test_memory_isolation.py",
    "integration/test_real_cluster.py",
    "integration/test_fault_profiles_reach_the_report.py",
]


def _defined_under(func, root: Path) -> bool:
    code = getattr(func, "__code__", None)
    return code is not None and root in Path(code.co_filename).resolve().parents


def module_fixtures(item: pytest.Item, root: Path = TESTS) -> list[str]:
    """The module-scoped fixtures defined under ``root`` that ``item`` uses, by name."""
    info = getattr(item, "_fixtureinfo", None)
    if info is None:
        return []
    names = []
    for name in info.names_closure:
        defs = info.name2fixturedefs.get(name)
        if defs and defs[-1].scope == "module" and _defined_under(defs[-1].func, root):  # [-1]: the one in force
            names.append(name)
    return names


def group_shared_module_fixtures(items: list[pytest.Item], root: Path = TESTS) -> None:
    """Give the tests of a module that share a module-scoped fixture one ``xdist_group``,
    ``<module>::<fixture>`` (tests joined by any fixture they share, transitively)."""
    by_module: dict[Path, list[pytest.Item]] = {}
    for item in items:
        if item.get_closest_marker("xdist_group") is None:
            by_module.setdefault(Path(str(item.path)), []).append(item)
    for path, module_items in by_module.items():
        leader: dict[str, str] = {}

        def find(name: str) -> str:
            while leader.setdefault(name, name) != name:
                name = leader[name]
            return name

        uses = [(item, module_fixtures(item, root)) for item in module_items]
        for _, names in uses:
            for other in names[1:]:
                leader[find(other)] = find(names[0])
        module = path.relative_to(root).as_posix() if root in path.parents else path.name
        for item, names in uses:
            if names:
                item.add_marker(pytest.mark.xdist_group(f"{module}::{find(names[0])}"))


def longest_first(items: list[pytest.Item], root: Path = TESTS, longest: list[str] = LONGEST) -> None:
    """Reorder ``items`` (stably, whole modules): ``longest`` in its order, the other integration tests, then
    the rest."""
    def rank(item: pytest.Item) -> tuple[int, int]:
        path = Path(str(item.path))
        module = path.relative_to(root).as_posix() if root in path.parents else path.name
        if module in longest:
            return 0, longest.index(module)
        return (1, 0) if module.startswith("integration/") else (2, 0)

    items.sort(key=rank)


def is_integration(nodeid: str) -> bool:
    """Whether a test id (``tests/integration/test_x.py::test_y[...]``) is an integration test's."""
    return "integration" in Path(nodeid.split("::", 1)[0]).parts


def long_poles_apart(config: pytest.Config, log):
    """``loadgroup`` scheduling that hands a worker still running integration tests a quick unit from the
    tail of the queue rather than the next long unit at its head (the module docstring says why)."""
    from xdist.scheduler import LoadGroupScheduling

    class LongPolesApart(LoadGroupScheduling):
        def _assign_work_unit(self, node) -> None:
            busy = any(is_integration(nodeid) and not done
                       for unit in self.assigned_work.get(node, {}).values() for nodeid, done in unit.items())
            if busy and self.workqueue:
                scope, unit = next(reversed(self.workqueue.items()))
                if not any(is_integration(nodeid) for nodeid in unit):
                    self.workqueue.move_to_end(scope, last=False)
            super()._assign_work_unit(node)

    return LongPolesApart(config, log)
