"""Fixtures of the monitoring unit tests: a bootstrapped in-process cluster state and an exposition parser."""

from __future__ import annotations

import pytest

from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import load_cluster_config
from tests.exposition import parse_exposition, series


@pytest.fixture
def state(tmp_path) -> ClusterState:
    st = ClusterState(load_cluster_config(), tmp_path)
    bootstrap(st)
    return st


class _Expo:
    parse = staticmethod(parse_exposition)
    series = staticmethod(series)


@pytest.fixture
def expo() -> _Expo:
    """``expo.parse(text)`` and ``expo.series(samples, name, **labels)``."""
    return _Expo()
