"""How `make test` shares its workers (pytest-xdist, ``--dist loadgroup``); the rules are in
``tests/scheduling.py``."""

from __future__ import annotations

import pytest

from tests import scheduling


@pytest.hookimpl(tryfirst=True)  # before xdist reads the groups into the test ids
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    scheduling.group_shared_module_fixtures(items)
    scheduling.longest_first(items)
