"""How `make test` shares its workers (pytest-xdist, ``--dist loadgroup``); the rules are in
``tests/scheduling.py``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests import scheduling

UNIT_ONLY = "not integration"  # `make unit`'s mark expression


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """``-m "not integration"`` does not import ``tests/integration``: every test module there is marked
    ``integration`` (``tests/unit/structure/test_integration_marks.py``), so none of its tests would be kept."""
    if config.getoption("markexpr") == UNIT_ONLY and collection_path == scheduling.TESTS / "integration":
        return True
    return None


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    scheduling.group_shared_module_fixtures(items)
    scheduling.longest_first(items)


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # before xdist's own; a session without xdist never calls it
def pytest_xdist_make_scheduler(config: pytest.Config, log):
    """``--dist loadgroup`` with long units kept apart (``scheduling.long_poles_apart``)."""
    if config.getvalue("dist") == "loadgroup":
        return scheduling.long_poles_apart(config, log)
    return None
