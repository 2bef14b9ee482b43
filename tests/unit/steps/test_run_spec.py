"""The run's spec: fixed by validate_plan, read by every later task; a plan edited mid-run is refused."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.steps.run_spec import RunSpec, plan_unchanged

SPEC = {"plan": "plans/default.yaml", "plan_hash": "a" * 64, "run_dir": "/ev/run", "started_at": "2026-12-06T20:00:00Z",
        "pods": 24}


def test_the_spec_reads_back_what_validate_plan_returned():
    spec = RunSpec.from_dict(SPEC)
    assert spec.to_dict() == SPEC
    with pytest.raises(AttributeError):
        spec.plan = "other.yaml"  # frozen


def test_an_output_without_the_plans_hash_names_the_field_and_the_fix():
    with pytest.raises(ConfigError) as err:
        RunSpec.from_dict({k: v for k, v in SPEC.items() if k != "plan_hash"})
    assert "plan_hash: missing" in str(err.value) and "validate_plan" in str(err.value)


def test_the_same_plan_passes_and_an_edited_one_is_refused_with_both_hashes():
    spec = RunSpec.from_dict(SPEC)
    plan_unchanged(spec, "a" * 64)
    with pytest.raises(ConfigError) as err:
        plan_unchanged(spec, "b" * 64)
    assert "aaaaaaaaaaaa then, bbbbbbbbbbbb now" in str(err.value)
