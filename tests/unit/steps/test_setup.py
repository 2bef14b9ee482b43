"""validate_plan starts a cleared run over: no marker of a past try (lease, release, a shard's "all created")
survives it, so the new try's release cannot go ahead on the old try's word; and it stores the suites'
parameters with the evidence from the start."""

from __future__ import annotations

from gpupoc.steps import setup
from gpupoc.steps.markers import LEASE_FILE, RELEASE_FILE
from gpupoc.steps.shard_files import CREATED_PREFIX

from .conftest import RUN_ID, TC


def test_a_cleared_run_loses_every_marker_of_its_past_try_and_keeps_its_evidence(plan_file, make_ctx):
    ctx = make_ctx()
    for name in (LEASE_FILE, RELEASE_FILE, f"{CREATED_PREFIX}0", f"{CREATED_PREFIX}1", "submission-a-try1"):
        ctx.writer.write_json(name, {"at": "2026-12-01T09:00:00Z"})
    out = setup.validate_plan(str(plan_file), f"poc_{TC}", RUN_ID, TC, {})
    left = sorted(p.stem for p in ctx.files(LEASE_FILE).parent.glob("*.json"))
    assert out["pods"] == len(ctx.items)
    assert not any(n.startswith(CREATED_PREFIX) or n in (LEASE_FILE, RELEASE_FILE) for n in left), left
    assert "submission-a-try1" in left, "what the past try recorded is evidence: kept"


def test_the_plan_s_suite_parameters_are_in_the_evidence_before_any_other_task_runs(plan_file, make_ctx):
    from gpupoc.steps.finish import suite_parameters

    setup.validate_plan(str(plan_file), f"poc_{TC}", RUN_ID, TC, {})
    ctx = make_ctx()
    assert ctx.read_file("suite_parameters") == suite_parameters(ctx), "a run whose validate never ran has them"


def test_the_run_s_spec_is_returned_and_kept_in_the_evidence(plan_file, make_ctx):
    from gpupoc.plan import plan_hash
    from gpupoc.steps.run_spec import RUN_SPEC_FILE, RunSpec

    out = setup.validate_plan(str(plan_file), f"poc_{TC}", RUN_ID, TC, {})
    ctx = make_ctx()
    spec = RunSpec.from_dict(out)
    assert ctx.read_file(RUN_SPEC_FILE) == out
    assert spec.plan_hash == plan_hash(ctx.plan) and spec.run_dir == str(ctx.run_dir)
