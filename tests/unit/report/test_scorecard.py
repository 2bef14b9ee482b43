"""Experience scores from a scorecard file or the report DAG's Params."""

import pytest
import yaml

from gpupoc.exceptions import ConfigError
from gpupoc.report.items import experience_items
from gpupoc.report.rules import DecisionRules
from gpupoc.report.scorecard import load_scorecard, parse_scorecard
from gpupoc.validation.models import Verdict


def test_yaml_scorecard_by_reviewer(tmp_path):
    p = tmp_path / "scores.yaml"
    p.write_text(yaml.safe_dump({"reviewers": [{"name": "Zhao Min", "role": "business",
                                                "scores": {"documentation": 2, "ui_usability": 4}}]}))
    scores = load_scorecard(p)
    by = {i.id: i for i in experience_items(scores, DecisionRules())}
    assert by["documentation"].verdict is Verdict.FAIL and "Zhao Min=2" in by["documentation"].reason
    assert by["ui_usability"].verdict is Verdict.PASS
    assert by["training_cost"].verdict is Verdict.NOT_VERIFIED


def test_params_with_blank_fields_are_no_scores():
    scores = parse_scorecard({"scores": [{"reviewer": "A", "item": "training_cost", "score": None},
                                         {"reviewer": "B", "item": "training_cost", "score": 4}]})
    assert [(s.reviewer, s.score) for s in scores] == [("B", 4)]


def test_bad_entries_are_listed_with_their_path():
    with pytest.raises(ConfigError) as exc:
        parse_scorecard({"reviewers": [{"name": "A", "scores": {"ui_usability": 7, "speed": 3}}, {"scores": {}}]})
    text = str(exc.value)
    assert "reviewers[0].scores.ui_usability.score" in text
    assert "unknown experience item 'speed'" in text
    assert "reviewers[1].name: missing" in text


def test_a_scorecard_file_cannot_say_who_signed_in(tmp_path):
    from gpupoc.exceptions import ConfigError
    from gpupoc.report.scorecard import read_scorecard

    f = tmp_path / "card.yaml"
    f.write_text("signoffs:\n  - {reviewer: Zhao Min, role: security, action: confirm, at: '2026-12-01', "
                 "signed_in_as: zhao}\n")
    with pytest.raises(ConfigError) as exc:
        read_scorecard(f)
    assert exc.value.errors[0].startswith("signoffs[0].signed_in_as: only a poc_report run sets who signed in")
