"""Label values: sanitised like Airflow's run_id label, so both agree and stay valid."""

from __future__ import annotations

import pytest
from airflow.providers.cncf.kubernetes.pod_generator import make_safe_label_value

from gpupoc.podspec.labels import is_valid_label_value, safe_label_value


@pytest.mark.parametrize("value", ["manual__2026-11-30T07:00:00+00:00", "scheduled__2026-12-01T00:00:00+00:00",
                                   "simple-run", "a" * 80, "-lead.and.trail-"])
def test_same_as_airflow_and_valid(value):
    assert safe_label_value(value) == make_safe_label_value(value)
    assert is_valid_label_value(safe_label_value(value))


def test_distinct_run_ids_stay_distinct():
    assert safe_label_value("run:1") != safe_label_value("run+1")
    assert safe_label_value("ok-value") == "ok-value"


def test_value_with_nothing_valid_becomes_its_digest():
    v = safe_label_value("日本")
    assert is_valid_label_value(v) and len(v) == 9
