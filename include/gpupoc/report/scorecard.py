"""Experience scores by named reviewers, from a scorecard file (YAML/JSON) or the report DAG's Params.

Accepted shapes (the same as a dict of Airflow Params)::

    reviewers:                       # one entry per reviewer
      - name: Wang Fang
        role: business
        scores: {ui_usability: 4, documentation: 3, training_cost: 4}
        comments: {training_cost: "half a day for a new user"}
    scores:                          # or a flat list
      - {reviewer: Li Lei, role: business, item: documentation, score: 2, comment: "..."}
    signoffs:                        # confirmations and objections (gpupoc.report.signoff); shown as
      - {reviewer: Zhao Min, role: security, action: confirm, at: "2026-12-01T10:00:00+08:00"}
                                     # unverified claims: only the trigger form's count (gpupoc.report.signin)
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from gpupoc.common.validation import error_lines
from gpupoc.exceptions import ConfigError
from gpupoc.report.models import ReviewerScore
from gpupoc.report.signin import STAMP

EXPERIENCE_ITEMS = ("ui_usability", "documentation", "training_cost")


def parse_scorecard(data: Any, source: str = "scorecard") -> list[ReviewerScore]:
    """Scores from a mapping; raise ConfigError listing every bad entry with its path."""
    if data in (None, {}, []):
        return []
    if not isinstance(data, dict):
        raise ConfigError(source, ["(root): expected a mapping with 'reviewers' or 'scores'"])
    out, errors = [], []
    for i, r in enumerate(data.get("reviewers") or []):
        name = (r or {}).get("name")
        if not name:
            errors.append(f"reviewers[{i}].name: missing; every score needs a named reviewer")
            continue
        for item, score in ((r.get("scores") or {}).items()):
            if score in (None, ""):
                continue  # a blank form field is no score, not a zero
            _add(out, errors, f"reviewers[{i}].scores.{item}",
                 {"reviewer": name, "role": r.get("role", ""), "item": item, "score": score,
                  "comment": (r.get("comments") or {}).get(item, "")})
    for i, s in enumerate(data.get("scores") or []):
        if (s or {}).get("score") in (None, ""):
            continue
        _add(out, errors, f"scores[{i}]", s)
    if errors:
        raise ConfigError(source, errors)
    return out


def _add(out: list[ReviewerScore], errors: list[str], path: str, entry: dict[str, Any]) -> None:
    if entry.get("item") not in EXPERIENCE_ITEMS:
        errors.append(f"{path}: unknown experience item {entry.get('item')!r}; one of {list(EXPERIENCE_ITEMS)}")
        return
    try:
        out.append(ReviewerScore.model_validate(entry))
    except ValidationError as exc:
        errors += [f"{path}.{line}" for line in error_lines(exc)]


def load_scorecard(path: str | Path | None) -> list[ReviewerScore]:
    """Scores from a YAML or JSON file; None gives no scores (the items stay not verified)."""
    if path is None:
        return []
    return parse_scorecard(read_scorecard(path), str(path))


def read_scorecard(path: str | Path) -> dict[str, Any]:
    """The scorecard file as a mapping (scores and sign-offs); ConfigError naming the file and the fix."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(str(p), ["(file): scorecard not found; pass an existing YAML or JSON file"])
    text = p.read_text(encoding="utf-8")
    try:
        data = json.loads(text) if p.suffix == ".json" else yaml.safe_load(text)
    except (json.JSONDecodeError, yaml.YAMLError) as exc:
        raise ConfigError(str(p), [f"(parse): {exc}"]) from None
    if data in (None, ""):
        return {}
    if not isinstance(data, dict):
        raise ConfigError(str(p), ["(root): expected a mapping with 'reviewers', 'scores' or 'signoffs'"])
    stamped = [i for i, s in enumerate(data.get("signoffs") or []) if isinstance(s, dict) and STAMP in s]
    if stamped:
        raise ConfigError(str(p), [f"signoffs[{i}].{STAMP}: only a poc_report run sets who signed in; remove the "
                                   "field (a sign-off in a file is shown as an unverified claim) or sign off in the "
                                   "trigger form as the reviewer's Airflow user" for i in stamped])
    return data
