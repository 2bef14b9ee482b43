"""Expectation suites as data: GX 1.x JSON files under ``expectations/`` with gpupoc meta.

Each suite's ``meta`` names its ``test_class`` (a class, a list of classes, or ``"*"``), the ``table`` it
checks (``derived.<name>`` for a table derived before validation) and default ``parameters`` (plan thresholds
override them by name; expectations refer to them with ``{"$PARAMETER": name}``; ``minus_<name>`` is always
``-<name>``). Each expectation's ``meta`` carries ``check_id``, ``tier``, ``item``, ``signal``, and optionally
``failure_class`` (the class of a failure, default product_gap), ``requires`` (a parameter that must be true
for the check to apply, e.g. ``require_alerts``), ``applies_when`` (the case a conditional check judges; when it
never arose the check is not applicable, ``gpupoc.validation.conditions``) and ``optional`` (not verified does
not hold its item back).
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpupoc.exceptions import ConfigError
from gpupoc.validation import conditions
from gpupoc.validation.models import FailureClass, Tier

CHECK_ID_RE = re.compile(r"^[A-Z]{2,4}-\d{2}$")
REQUIRED_META = ("check_id", "tier", "item", "signal")
DERIVED_PREFIX = "derived."


def default_suites_dir() -> Path:
    """``expectations/`` at the project root (next to ``include/``)."""
    return Path(__file__).resolve().parents[3] / "expectations"


@dataclass
class SuiteFile:
    """One suite file, its parsed JSON and where it came from."""

    path: Path
    data: dict[str, Any]
    errors: list[str] = field(default_factory=list)

    @property
    def name(self) -> str:
        return str(self.data.get("name", self.path.stem))

    @property
    def meta(self) -> dict[str, Any]:
        return dict(self.data.get("meta") or {})

    @property
    def test_classes(self) -> list[str]:
        tc = self.meta.get("test_class", "")
        return [str(t) for t in tc] if isinstance(tc, list) else [str(tc)]

    @property
    def table(self) -> str:
        return str(self.meta.get("table", ""))

    @property
    def is_derived(self) -> bool:
        return self.table.startswith(DERIVED_PREFIX)

    def applies_to(self, test_class: str) -> bool:
        return "*" in self.test_classes or test_class in self.test_classes

    def parameters(self, overrides: dict[str, Any] | None = None) -> dict[str, Any]:
        params = dict(self.meta.get("parameters") or {})
        for k, v in (overrides or {}).items():
            if k in params:
                params[k] = v
        for k in params:  # "minus_x" follows "x" (GX cannot negate a parameter itself)
            if k.startswith("minus_") and isinstance(params.get(k[6:]), (int, float)):
                params[k] = -params[k[6:]]
        return params

    def expectations(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        """The expectations that apply under ``params`` (a ``requires`` parameter set false drops one)."""
        out = []
        for exp in self.data.get("expectations", []):
            req = (exp.get("meta") or {}).get("requires")
            if req and not params.get(req, True):
                continue
            out.append(exp)
        return out

    def gx_suite_dict(self, params: dict[str, Any]) -> dict[str, Any]:
        """The dict ``gx.ExpectationSuite(**d)`` accepts."""
        return {"name": self.name, "expectations": self.expectations(params), "meta": self.meta}


def lint_suite(path: Path, data: Any, known_items: set[str] | None = None) -> list[str]:
    """Every problem with one suite file, as ``file: expectations[i].meta.x: message`` lines."""
    errs: list[str] = []
    if not isinstance(data, dict):
        return [f"{path.name}: (root): expected a JSON object"]
    meta = data.get("meta") or {}
    if not data.get("name"):
        errs.append(f"{path.name}: name: missing; set it to '<test_class>.<table>'")
    if not meta.get("test_class"):
        errs.append(f"{path.name}: meta.test_class: missing; set a test class or '*'")
    if not meta.get("table"):
        errs.append(f"{path.name}: meta.table: missing; name the evidence table the suite checks")
    params = meta.get("parameters") or {}
    exps = data.get("expectations")
    if not isinstance(exps, list) or not exps:
        errs.append(f"{path.name}: expectations: expected a non-empty list")
        return errs
    tiers = {t.value for t in Tier}
    classes = {c.value for c in FailureClass}
    for i, exp in enumerate(exps):
        where = f"{path.name}: expectations[{i}]"
        em = exp.get("meta") or {}
        for key in REQUIRED_META:
            if not em.get(key):
                errs.append(f"{where}.meta.{key}: missing; every check needs {', '.join(REQUIRED_META)}")
        if em.get("check_id") and not CHECK_ID_RE.match(str(em["check_id"])):
            errs.append(f"{where}.meta.check_id: expected a form like 'ISO-01', got {em['check_id']!r}")
        if em.get("tier") and em["tier"] not in tiers:
            errs.append(f"{where}.meta.tier: expected one of {sorted(tiers)}, got {em['tier']!r}")
        if em.get("failure_class") and em["failure_class"] not in classes:
            errs.append(f"{where}.meta.failure_class: expected one of {sorted(classes)}, got {em['failure_class']!r}")
        if known_items is not None and em.get("item") and em["item"] not in known_items:
            errs.append(f"{where}.meta.item: unknown report item {em['item']!r}; known: {sorted(known_items)}")
        errs += conditions.lint(where, em)
        for k, v in (exp.get("kwargs") or {}).items():
            if isinstance(v, dict) and "$PARAMETER" in v and v["$PARAMETER"] not in params:
                errs.append(f"{where}.kwargs.{k}: parameter {v['$PARAMETER']!r} has no default in meta.parameters")
    return errs


def load_suites(suites_dir: str | Path | None = None, known_items: set[str] | None = None) -> list[SuiteFile]:
    """Every ``*.json`` suite in the directory; raise ConfigError listing every problem, or a duplicate check id."""
    d = Path(suites_dir) if suites_dir else default_suites_dir()
    if not d.is_dir():
        raise ConfigError(str(d), ["(dir): expectation suites directory not found; pass --suites DIR"])
    suites, errors, seen = [], [], {}
    for p in sorted(d.glob("*.json")):
        try:
            data = json.loads(p.read_text(encoding="utf-8"))
        except json.JSONDecodeError as exc:
            errors.append(f"{p.name}: (json): {exc}")
            continue
        errors += lint_suite(p, data, known_items)
        for exp in data.get("expectations", []) if isinstance(data, dict) else []:
            cid = (exp.get("meta") or {}).get("check_id")
            if cid and cid in seen:
                errors.append(f"{p.name}: check_id {cid} already used in {seen[cid]}; check ids must be unique")
            elif cid:
                seen[cid] = p.name
        suites.append(SuiteFile(p, data))
    if errors:
        raise ConfigError(str(d), errors)
    return suites
