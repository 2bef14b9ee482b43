"""Sign-off in the acceptance meeting: each role confirms, or objects to, its own block of the report.

Security signs off the must items, platform (operations) the key items, business (the algorithm teams) the
experience items, management the decision. A sign-off names the reviewer, the role, the time and a comment;
it comes from the report's trigger form, the scorecard file (``signoffs:``) or an earlier report run on the
same evidence (the ledger ``signoffs.jsonl`` beside the report directories). Only a sign-off given by the
reviewer's own Airflow user counts (``gpupoc.report.signin``); others are shown as unverified claims. An
objection keeps its items open: a passing item becomes not verified, with the objection as its reason. A
sign-off given on other evidence (another ``basis``) is shown but not counted.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any, Iterable

from pydantic import ValidationError

from gpupoc.common.validation import error_lines
from gpupoc.evidence.reader import RunEvidence
from gpupoc.exceptions import ConfigError
from gpupoc.report.models import (DECISION_ITEM, ItemResult, ReviewRole, SignOff, SignOffAction, SignOffBlock,
                                  SignOffLine, SignOffStatus, Tier, UnverifiedSignOff, Verdict)
from gpupoc.report.wording import Wording

ROLE_TIER: dict[ReviewRole, Tier | None] = {ReviewRole.SECURITY: Tier.MUST, ReviewRole.PLATFORM: Tier.KEY,
                                            ReviewRole.BUSINESS: Tier.EXPERIENCE, ReviewRole.MANAGEMENT: None}
LEDGER = "signoffs.jsonl"


def parse_signoffs(entries: Any, source: str = "signoffs") -> list[SignOff]:
    """Sign-offs from a list of mappings; ConfigError listing every bad entry with its path."""
    if entries in (None, "", []):
        return []
    if not isinstance(entries, list):
        raise ConfigError(source, ["signoffs: expected a list of {reviewer, role, action, items, comment, at}"])
    out, errors = [], []
    for i, entry in enumerate(entries):
        try:
            out.append(SignOff.model_validate(entry))
        except ValidationError as exc:
            errors += [f"signoffs[{i}].{line}" for line in error_lines(exc)]
    if errors:
        raise ConfigError(source, errors)
    return out


def block_items(role: ReviewRole, items: list[ItemResult]) -> list[str]:
    """The items a role signs off: its tier's items, or the decision."""
    tier = ROLE_TIER[role]
    return [DECISION_ITEM] if tier is None else [i.id for i in items if i.tier is tier]


def check_signoffs(signoffs: list[SignOff], items: list[ItemResult], reviewers: Iterable[Any],
                   source: str = "signoffs") -> None:
    """Refuse a sign-off of an item outside the role's block, or by someone the plan does not list for
    the role (when the plan lists reviewers of that role)."""
    listed: dict[str, set[str]] = {}
    for r in reviewers:
        listed.setdefault(str(r.role), set()).add(r.name)
    errors = []
    for i, s in enumerate(signoffs):
        names = listed.get(s.role.value)
        if names and s.reviewer not in names:
            errors.append(f"signoffs[{i}].reviewer: {s.reviewer!r} is not a {s.role.value} reviewer of the plan "
                          f"(report.reviewers: {sorted(names)}); add them to the plan or pick a listed name")
        allowed = block_items(s.role, items)
        for j, item in enumerate(s.items):
            if item not in allowed:
                errors.append(f"signoffs[{i}].items[{j}]: {item!r} is not in the {s.role.value} block; "
                              f"one of {allowed}")
    if errors:
        raise ConfigError(source, errors)


def evidence_basis(runs: Iterable[RunEvidence]) -> str:
    """A fingerprint of the evidence a report judges: each run's manifest and validation summary."""
    from gpupoc.validation.stored import summary_file

    h = hashlib.sha256()
    for ev in sorted(runs, key=lambda e: e.rel_dir):
        h.update(ev.rel_dir.encode())
        for p in (ev.run_dir / "manifest.json", summary_file(ev)):
            h.update(ev.sha256(p).encode() if p.is_file() else b"-")
    return h.hexdigest()


def with_basis(signoffs: list[SignOff], basis: str) -> list[SignOff]:
    """Sign-offs given without a basis judged this report's evidence."""
    return [s if s.basis else s.model_copy(update={"basis": basis}) for s in signoffs]


def apply_signoffs(items: list[ItemResult], signoffs: list[SignOff], words: Wording) -> None:
    """Attach each counted sign-off to its items; an objection keeps its items open (a pass becomes not
    verified) with the objection as the reason."""
    by_id = {i.id: i for i in items}
    for s in signoffs:
        for item_id in s.items or block_items(s.role, items):
            it = by_id.get(item_id)
            if it is None:
                continue
            it.signoffs.append(s)
            if s.action is SignOffAction.OBJECT:
                why = words.t("signoff.objection", reviewer=s.reviewer, role=words.t(f"role.{s.role.value}"),
                              at=s.at, comment=s.comment)
                if it.verdict is Verdict.PASS:
                    it.verdict, it.failure_class, it.reason = Verdict.NOT_VERIFIED, None, why
                else:
                    it.reason = f"{it.reason}{words.t('reason_sep')}{why}" if it.reason else why


def _status(given: list[SignOff]) -> SignOffStatus:
    if any(s.action is SignOffAction.OBJECT for s in given):
        return SignOffStatus.OBJECTED
    return SignOffStatus.CONFIRMED if given else SignOffStatus.OPEN


def blocks(items: list[ItemResult], decision: str, signoffs: list[SignOff], other: list[SignOff],
           reviewers: Iterable[Any], unverified: Iterable[UnverifiedSignOff] = ()) -> list[SignOffBlock]:
    """One confirmation block per role: its items (or the decision), who confirmed or objected (counted
    sign-offs only), the sign-offs given on other evidence and the unverified claims."""
    unverified = list(unverified)
    by_id = {i.id: i for i in items}
    names: dict[str, list[str]] = {}
    for r in reviewers:
        names.setdefault(str(r.role), []).append(r.name)
    out = []
    for role, tier in ROLE_TIER.items():
        lines = []
        for item_id in block_items(role, items):
            given = [s for s in signoffs if s.role is role and (not s.items or item_id in s.items)]
            verdict = decision if item_id == DECISION_ITEM else by_id[item_id].verdict.value
            lines.append(SignOffLine(item=item_id, verdict=verdict, status=_status(given), by=given))
        states = {ln.status for ln in lines}
        status = (SignOffStatus.OBJECTED if SignOffStatus.OBJECTED in states else
                  SignOffStatus.CONFIRMED if states == {SignOffStatus.CONFIRMED} else SignOffStatus.OPEN)
        out.append(SignOffBlock(role=role, tier=tier, reviewers=names.get(role.value, []), status=status,
                                lines=lines, other_evidence=[s for s in other if s.role is role],
                                unverified=[u for u in unverified if u.signoff.role is role]))
    return out


def read_ledger(path: Path, except_run: str = "") -> list[SignOff]:
    """Sign-offs recorded by earlier report runs (not those of ``except_run``, which is being rebuilt)."""
    if not path.is_file():
        return []
    out = []
    for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
            if entry.get("run_id") != except_run:
                out.append(SignOff.model_validate(entry["signoff"]))
        except (ValueError, KeyError, TypeError, ValidationError) as exc:
            raise ConfigError(str(path), [f"line {n}: not a sign-off record ({exc}); fix or remove the line"]) from None
    return out


def record(path: Path, run_id: str, signoffs: list[SignOff]) -> None:
    """Keep this report run's sign-offs in the ledger (a rerun of the run replaces its own lines)."""
    kept = []
    if path.is_file():
        kept = [ln for ln in path.read_text(encoding="utf-8").splitlines()
                if ln.strip() and json.loads(ln).get("run_id") != run_id]
    kept += [json.dumps({"run_id": run_id, "signoff": s.model_dump(mode="json")}, ensure_ascii=False, sort_keys=True)
             for s in signoffs]
    if not kept and not path.exists():
        return
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text("".join(ln + "\n" for ln in kept), encoding="utf-8")
    tmp.replace(path)
