"""The ``poc_report`` DAG's trigger form (Airflow Params) and its translation into a scorecard.

One reviewer scores the experience items 1-5 with a comment each in the form; several reviewers, or a
prepared sheet, come as a scorecard file path (YAML/JSON, shape of ``gpupoc.report.scorecard``) or as a
``scores`` list in the run's conf. In the acceptance meeting a reviewer also signs off their block: a
confirmation or an objection with a comment (``gpupoc.report.signoff``); more come as a ``signoffs`` list.
Every sign-off of the form is stamped with the Airflow user who triggered the run (``gpupoc.report.signin``).
Kept free of Airflow imports: the DAG file builds Params from ``fields``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from gpupoc.exceptions import ConfigError
from gpupoc.report.models import DECISION_ITEM, ReviewRole, SignOffAction
from gpupoc.report.scorecard import EXPERIENCE_ITEMS
from gpupoc.report.signin import stamp

ROLES = ("business", "platform", "security", "operations", "user")
SIGNOFF_FIELDS = ("signoff_reviewer", "signoff_role", "signoff_action", "signoff_items", "signoff_comment")
TITLES = {
    "ui_usability": "UI usability",
    "documentation": "Documentation",
    "training_cost": "Training cost",
}


def fields(default_plan: str) -> dict[str, dict[str, Any]]:
    """Param name -> keyword arguments of ``airflow.sdk.Param`` (default first), in form order."""
    out: dict[str, dict[str, Any]] = {
        "plan": {"default": default_plan, "type": "string", "title": "POC plan",
                 "description": "path of the plan YAML (relative paths: against the repository)"},
        "reviewer": {"default": "", "type": "string", "title": "Reviewer",
                     "description": "who gives the scores below (required when any score is set)"},
        "reviewer_role": {"default": "business", "type": "string", "enum": list(ROLES), "title": "Reviewer's role"},
    }
    for item in EXPERIENCE_ITEMS:
        out[item] = {"default": None, "type": ["null", "integer"], "minimum": 1, "maximum": 5,
                     "title": f"{TITLES[item]} (1-5)", "description": "1 poor, 3 acceptable, 5 excellent; "
                     "leave empty for no score (the item stays not verified)"}
        out[f"{item}_comment"] = {"default": "", "type": "string", "title": f"{TITLES[item]}: comment"}
    out["scorecard_file"] = {"default": "", "type": "string", "title": "Scorecard file",
                             "description": "YAML/JSON with several reviewers' scores (see docs); "
                             "relative paths: against the repository"}
    out["scores"] = {"default": [], "type": "array", "title": "More scores",
                     "description": 'list of {"reviewer", "role", "item", "score", "comment"}'}
    out["signoff_reviewer"] = {"default": "", "type": "string", "title": "Sign-off: reviewer",
                               "description": "who confirms or objects (a reviewer the plan lists for the role); "
                               "it counts only when you triggered this run signed in as that reviewer's Airflow "
                               "user (report.reviewers[].airflow_user), else it is shown as an unverified claim"}
    out["signoff_role"] = {"default": "", "type": "string", "enum": ["", *(r.value for r in ReviewRole)],
                           "title": "Sign-off: role", "description": "security: the must items; platform: the key "
                           "items; business: the experience items; management: the decision"}
    out["signoff_action"] = {"default": "", "type": "string", "enum": ["", *(a.value for a in SignOffAction)],
                             "title": "Sign-off: confirm or object", "description": "an objection keeps its items "
                             "open (never a pass) and needs a comment"}
    out["signoff_items"] = {"default": [], "type": "array", "items": {"type": "string"},
                            "title": "Sign-off: items", "description": "item ids of the role's block (e.g. "
                            f"permission_isolation, or {DECISION_ITEM!r}); empty: the whole block"}
    out["signoff_comment"] = {"default": "", "type": "string", "title": "Sign-off: comment"}
    out["signoffs"] = {"default": [], "type": "array", "title": "More sign-offs",
                       "description": 'list of {"reviewer", "role", "action", "items", "comment", "at"}'}
    out["language"] = {"default": "", "type": "string", "enum": ["", "en", "zh"],
                       "title": "Report language", "description": "empty: the plan's choice"}
    return out


def signoffs_from_params(params: dict[str, Any], at: str, signed_in_as: str | None = None) -> list[dict[str, Any]]:
    """The form's sign-off (given at ``at``, the report run's time) plus any ``signoffs`` in the conf, each
    stamped with ``signed_in_as``, the Airflow user who triggered the run (``gpupoc.report.signin``).

    A half-filled sign-off is refused naming the missing field."""
    out: list[dict[str, Any]] = []
    action = str(params.get("signoff_action") or "").strip()
    filled = [f for f in SIGNOFF_FIELDS if params.get(f) not in (None, "", [])]
    if filled and not action:
        raise ConfigError("signoff_action", [f"signoff_action: empty, but {filled} were given; choose confirm or "
                                             "object, or clear the sign-off fields"])
    if action:
        missing = [f for f in ("signoff_reviewer", "signoff_role") if not str(params.get(f) or "").strip()]
        if action == SignOffAction.OBJECT.value and not str(params.get("signoff_comment") or "").strip():
            missing.append("signoff_comment")
        if missing:
            raise ConfigError(missing[0], [f"{m}: empty; a sign-off ({action}) needs the reviewer's name, role and, "
                                           "for an objection, a comment" for m in missing])
        out.append({"reviewer": str(params["signoff_reviewer"]).strip(), "role": params["signoff_role"],
                    "action": action, "items": list(params.get("signoff_items") or []),
                    "comment": str(params.get("signoff_comment") or ""), "at": at})
    for entry in params.get("signoffs") or []:
        out.append({"at": at, **entry} if isinstance(entry, dict) else entry)
    return stamp(out, signed_in_as)


def _file(path: str, repo: Path) -> dict:
    p = Path(path).expanduser()
    p = p if p.is_absolute() else repo / p
    if not p.is_file():
        raise ConfigError("scorecard_file", [f"scorecard_file: {p} not found; give an existing YAML or JSON file "
                                             "or leave the field empty"])
    try:
        data = yaml.safe_load(p.read_text(encoding="utf-8"))  # JSON is YAML
    except yaml.YAMLError as exc:
        raise ConfigError(str(p), [f"(parse): {exc}"]) from None
    if data in (None, ""):
        return {}
    if not isinstance(data, dict):
        raise ConfigError(str(p), ["(root): expected a mapping with 'reviewers' or 'scores'"])
    return data


def scorecard_from_params(params: dict[str, Any], repo: Path) -> dict[str, list]:
    """``{"reviewers": [...], "scores": [...]}`` (the scorecard shape) from the form's values.

    A score without a reviewer's name is refused: the report names who judged each experience item.
    """
    reviewers: list[dict] = []
    scores: list[dict] = []
    given = {i: params.get(i) for i in EXPERIENCE_ITEMS if params.get(i) not in (None, "")}
    name = str(params.get("reviewer") or "").strip()
    if given and not name:
        raise ConfigError("reviewer", [f"reviewer: empty, but scores were given for {sorted(given)}; "
                                       "enter the reviewer's name"])
    if given:
        reviewers.append({"name": name, "role": params.get("reviewer_role") or "",
                          "scores": given,
                          "comments": {i: str(params.get(f"{i}_comment") or "") for i in given}})
    if params.get("scorecard_file"):
        data = _file(str(params["scorecard_file"]), repo)
        reviewers += list(data.get("reviewers") or [])
        scores += list(data.get("scores") or [])
    scores += list(params.get("scores") or [])
    return {k: v for k, v in (("reviewers", reviewers), ("scores", scores)) if v}


def report_params(params: dict[str, Any], repo: Path, at: str = "", signed_in_as: str | None = None) -> dict[str, Any]:
    """What ``gpupoc.report.airflow.run_report`` takes: the scorecard keys, the sign-offs (given at ``at`` by
    ``signed_in_as``, the user who triggered the run) and the language."""
    out: dict[str, Any] = dict(scorecard_from_params(params, repo))
    signoffs = signoffs_from_params(params, at, signed_in_as)
    if signoffs:
        out["signoffs"] = signoffs
    if params.get("language"):
        out["language"] = params["language"]
    return out
