import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.fidelity.compare import Accepted, differences, load_accepted, markdown, stale, unaccepted
from gpupoc.fidelity.kueue_scenario import ACCEPTED_KUEUE
from gpupoc.fidelity.model import Difference, ScenarioResult, StepRecord


def _result(side: str, **steps: dict) -> ScenarioResult:
    return ScenarioResult(side, "v", {name: StepRecord(name, obs) for name, obs in steps.items()})


def test_equal_fields_are_no_difference_and_a_missing_field_reads_absent():
    sim = _result("simulated", quota={"create.code": "403", "create.reason": "Forbidden"})
    real = _result("real", quota={"create.code": "403", "create.fields": "code"})
    assert differences(sim, real) == [Difference("quota", "create.fields", "absent", "code"),
                                      Difference("quota", "create.reason", "Forbidden", "absent")]


def test_a_step_not_run_on_one_side_is_a_difference_never_equal():
    sim = _result("simulated", oom={"pod.phase": "Failed"})
    real = ScenarioResult("real", "v", {"oom": StepRecord("oom", {}, "no stage plays OOMKilled")})
    assert differences(sim, real) == [Difference("oom", "(step)", "run", "not run: no stage plays OOMKilled")]


def test_a_step_missing_from_one_run_is_not_run_there():
    diffs = differences(_result("simulated", watch={"a": "1"}), _result("real"))
    assert diffs == [Difference("watch", "(step)", "run", "not run: the step is not in this run")]


def test_an_accepted_entry_with_values_covers_only_those_values():
    diff = Difference("watch", "audit.resumed", "absent", "found")
    exact = Accepted("watch", "audit.resumed", "why", "test_x", simulated="absent", real="found")
    assert unaccepted([diff], [exact]) == []
    changed = Difference("watch", "audit.resumed", "absent", "something else")
    assert unaccepted([changed], [exact]) == [changed]
    anyvalue = Accepted("watch", "audit.resumed", "why", "test_x")
    assert unaccepted([changed], [anyvalue]) == []


def test_the_table_marks_new_differences_and_names_the_known_limit():
    diffs = [Difference("a", "f|g", "1", "2"), Difference("b", "h", "x", "y")]
    table = markdown(diffs, [Accepted("b", "h", "kwok runs no kubelet", "test_b")])
    rows = table.splitlines()
    assert rows[0] == "| step | field | simulated | real | status |"
    assert rows[2] == "| a | f\\|g | 1 | 2 | **new** |"
    assert rows[3] == "| b | h | x | y | known limit: kwok runs no kubelet |"


def test_an_entry_unseen_is_stale_unless_its_timing_says_the_real_side_shows_it_on_some_runs():
    seen = Accepted("a", "f", "why", "test_a")
    unseen = Accepted("b", "g", "why", "test_b")
    racy = Accepted("c", "h", "why", "test_c", timing="a race inside the real component")
    assert stale([seen, unseen, racy], [Difference("a", "f", "1", "2")]) == [unseen]
    table = markdown([Difference("c", "h", "x", "y")], [racy])
    assert "(seen on some runs only: a race inside the real component)" in table


def test_a_timing_entry_loads_and_the_shipped_kueue_list_gives_the_events_race_its_timing(tmp_path):
    path = tmp_path / "accepted.yaml"
    path.write_text("accepted:\n- {step: s, field: f, why: w, test: tests/x.py, timing: racy}\n")
    assert load_accepted(path)[0].timing == "racy"
    events = [a for a in load_accepted(ACCEPTED_KUEUE) if a.field.startswith("victim.events.")]
    assert events and all(a.timing for a in events)


def test_an_accepted_entry_without_its_test_is_refused_naming_the_fix(tmp_path):
    path = tmp_path / "accepted.yaml"
    path.write_text("accepted:\n- {step: oom, field: pod.phase, why: kwok}\n")
    with pytest.raises(ConfigError, match=r"accepted\[0\]: missing test; fix"):
        load_accepted(path)


def test_the_shipped_accepted_list_loads_and_names_a_test_for_every_entry():
    for entry in load_accepted():
        assert entry.test.startswith("tests/"), entry
        assert entry.why
