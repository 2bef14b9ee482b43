"""Fixtures: the default plan, and the same plan switched to each scheduler adapter."""

from __future__ import annotations

import copy
from pathlib import Path

import pytest
import yaml

from gpupoc.plan import DEFAULT_PLAN, load_plan, parse_plan



@pytest.fixture(scope="session")
def plan():
    return load_plan(DEFAULT_PLAN)


@pytest.fixture(scope="session")
def plan_for():
    raw = yaml.safe_load(Path(DEFAULT_PLAN).read_text())
    cache = {}

    def make(adapter: str, **options):
        key = (adapter, tuple(sorted(options.items())))
        if key not in cache:
            data = copy.deepcopy(raw)
            data["platform"]["adapter"] = adapter
            data["platform"]["options"].update(options)
            cache[key] = parse_plan(data, "plan", base_dir=Path(DEFAULT_PLAN).parent)
        return cache[key]

    return make
