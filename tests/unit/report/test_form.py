import json

import pytest
import yaml

from gpupoc.report.form import fields, report_params, scorecard_from_params
from gpupoc.exceptions import ConfigError
from gpupoc.report.scorecard import parse_scorecard

FORM = {"reviewer": "Wang Fang", "reviewer_role": "business", "ui_usability": 4, "ui_usability_comment": "clear",
        "documentation": 2, "documentation_comment": "no quick start", "training_cost": None,
        "training_cost_comment": "", "scorecard_file": "", "scores": [], "language": ""}


def test_one_reviewers_form_scores_become_a_named_scorecard(tmp_path):
    card = scorecard_from_params(FORM, tmp_path)
    assert card == {"reviewers": [{"name": "Wang Fang", "role": "business",
                                   "scores": {"ui_usability": 4, "documentation": 2},
                                   "comments": {"ui_usability": "clear", "documentation": "no quick start"}}]}
    scores = {s.item: (s.reviewer, s.score, s.comment) for s in parse_scorecard(card)}
    assert scores == {"ui_usability": ("Wang Fang", 4, "clear"), "documentation": ("Wang Fang", 2, "no quick start")}


def test_an_empty_form_gives_no_scores(tmp_path):
    assert scorecard_from_params({k: v for k, v in FORM.items() if k not in ("ui_usability", "documentation")},
                                 tmp_path) == {}


def test_scores_without_a_reviewer_name_are_refused(tmp_path):
    with pytest.raises(ConfigError) as exc:
        scorecard_from_params({**FORM, "reviewer": "  "}, tmp_path)
    assert "reviewer:" in str(exc.value) and "documentation" in str(exc.value)


def test_a_scorecard_file_and_extra_scores_add_to_the_form(tmp_path):
    (tmp_path / "card.yaml").write_text(yaml.safe_dump({
        "reviewers": [{"name": "Li Lei", "role": "platform", "scores": {"training_cost": 3}}],
        "scores": [{"reviewer": "Zhao", "item": "documentation", "score": 5}]}))
    extra = [{"reviewer": "Qian", "item": "ui_usability", "score": 1, "comment": "slow"}]
    card = scorecard_from_params({**FORM, "scorecard_file": "card.yaml", "scores": extra}, tmp_path)
    assert [r["name"] for r in card["reviewers"]] == ["Wang Fang", "Li Lei"]
    assert [s["reviewer"] for s in card["scores"]] == ["Zhao", "Qian"]
    assert len(parse_scorecard(card)) == 5


def test_a_json_scorecard_file_is_read_too_and_a_missing_one_is_named(tmp_path):
    (tmp_path / "card.json").write_text(json.dumps({"scores": [{"reviewer": "Z", "item": "documentation", "score": 4}]}))
    assert scorecard_from_params({"scorecard_file": str(tmp_path / "card.json")}, tmp_path)["scores"][0]["score"] == 4
    with pytest.raises(ConfigError) as exc:
        scorecard_from_params({"scorecard_file": "nope.yaml"}, tmp_path)
    assert "scorecard_file:" in str(exc.value) and "nope.yaml" in str(exc.value)


def test_report_params_pass_the_language_only_when_chosen(tmp_path):
    assert "language" not in report_params(FORM, tmp_path)
    assert report_params({**FORM, "language": "zh"}, tmp_path)["language"] == "zh"


def test_the_form_fields_are_valid_airflow_params_bounding_scores_to_1_5():
    from airflow.sdk import Param
    from airflow.sdk.definitions.param import ParamsDict

    params = ParamsDict({k: Param(**kw) for k, kw in fields("plans/default.yaml").items()})
    assert {"reviewer", "ui_usability", "documentation", "training_cost", "scorecard_file"} <= set(params.keys())
    params.validate()  # the defaults (no scores) are valid
    for ok in (1, 5, None):
        params["ui_usability"] = ok
    for bad in (0, 6, "four"):
        with pytest.raises(Exception):
            params["ui_usability"] = bad


SIGNOFF = {"signoff_reviewer": "Zhao Min", "signoff_role": "security", "signoff_action": "object",
           "signoff_items": ["queue_explainability"], "signoff_comment": "no preemption in the sample"}


def test_the_forms_sign_off_is_dated_with_the_run_and_joins_the_conf_sign_offs(tmp_path):
    extra = [{"reviewer": "Li Lei", "role": "platform", "action": "confirm"}]
    out = report_params({**FORM, **SIGNOFF, "signoffs": extra}, tmp_path, at="2026-12-01T02:00:00+00:00",
                        signed_in_as="zhao")
    assert out["signoffs"] == [
        {"reviewer": "Zhao Min", "role": "security", "action": "object", "items": ["queue_explainability"],
         "comment": "no preemption in the sample", "at": "2026-12-01T02:00:00+00:00", "signed_in_as": "zhao"},
        {"reviewer": "Li Lei", "role": "platform", "action": "confirm", "at": "2026-12-01T02:00:00+00:00",
         "signed_in_as": "zhao"}]
    assert "signoffs" not in report_params(FORM, tmp_path, at="x"), "no sign-off given, none recorded"


def test_every_sign_off_of_the_run_is_stamped_with_who_triggered_it_whatever_the_conf_claims(tmp_path):
    claimed = [{"reviewer": "Zhao Min", "role": "security", "action": "confirm", "signed_in_as": "zhao"}]
    out = report_params({**FORM, "signoffs": claimed}, tmp_path, at="t", signed_in_as="li")
    assert [s["signed_in_as"] for s in out["signoffs"]] == ["li"], "the conf cannot say who signed in"
    nobody = report_params({**FORM, **SIGNOFF}, tmp_path, at="t", signed_in_as=None)
    assert nobody["signoffs"][0]["signed_in_as"] == "", "a run the Assets started: nobody signed in"


@pytest.mark.parametrize("missing, field", [({"signoff_action": ""}, "signoff_action"),
                                            ({"signoff_reviewer": " "}, "signoff_reviewer"),
                                            ({"signoff_comment": ""}, "signoff_comment")])
def test_a_half_filled_sign_off_is_refused_naming_the_field(tmp_path, missing, field):
    with pytest.raises(ConfigError) as exc:
        report_params({**FORM, **SIGNOFF, **missing}, tmp_path, at="t")
    assert f"{field}:" in str(exc.value)


def test_the_sign_off_fields_are_valid_airflow_params_with_the_four_roles():
    from airflow.sdk import Param
    from airflow.sdk.definitions.param import ParamsDict

    params = ParamsDict({k: Param(**kw) for k, kw in fields("plans/default.yaml").items()})
    params.validate()
    for role in ("security", "platform", "business", "management"):
        params["signoff_role"] = role
    with pytest.raises(Exception):
        params["signoff_role"] = "auditor"
    with pytest.raises(Exception):
        params["signoff_action"] = "approve"
