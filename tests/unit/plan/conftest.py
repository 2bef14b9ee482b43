"""Fixtures: the shipped default plan as plain data, to break one field at a time."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from gpupoc.plan import DEFAULT_PLAN


@pytest.fixture(scope="session")
def default_data() -> dict:
    return yaml.safe_load(Path(DEFAULT_PLAN).read_text())


@pytest.fixture
def data(default_data) -> dict:
    """A fresh deep copy of the default plan's data, safe to mutate."""
    return copy.deepcopy(default_data)


def off_the_simulated_cluster(data: dict) -> dict:
    """``data`` for a real cluster: its node failures injected by a taint (``sim`` is refused there)."""
    for inj in data["test_classes"]["fault_recovery"]["injections"]:
        if inj["kind"] == "node_failure":
            inj["injector"] = "taint"
    for failure in data["test_classes"]["fault_recovery"].get("service_failures") or []:
        failure["injector"] = "taint"
    return data
