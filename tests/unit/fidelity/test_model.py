from gpupoc.fidelity.model import ScenarioResult, StepRecord, render


def test_values_render_as_the_table_shows_them():
    assert render(None) == "absent"
    assert render(True) == "true"
    assert render({"b", "a"}) == "a,b"
    assert render([]) == "[]"
    assert render(403) == "403"


def test_a_result_survives_its_json_form():
    result = ScenarioResult("real", "v1.37.2")
    result.record("quota").see("create.code", 403)
    result.record("oom").not_run = "no stage"
    again = ScenarioResult.from_dict(result.to_dict())
    assert again.steps["quota"].observations == {"create.code": "403"}
    assert again.steps["oom"] == StepRecord("oom", {}, "no stage") and again.version == "v1.37.2"
