"""Which sign-offs count: those given through the ``poc_report`` trigger form by the reviewer's own Airflow user.

The plan binds each reviewer to an Airflow user (``report.reviewers[].airflow_user``). The report run stamps
every sign-off of its form with the user who triggered the run (``SignOff.signed_in_as``; the DAG reads
Airflow's ``dag_run.triggering_user_name``). A sign-off counts only when that user is the one the plan binds
to the reviewer it names, in the role it signs for. Every other sign-off (another user claiming the name, a
reviewer with no bound user, one written in a scorecard file) is shown as an unverified claim, never counted.
"""

from __future__ import annotations

from typing import Any, Iterable

from gpupoc.report.models import SignOff, UnverifiedSignOff
from gpupoc.report.wording import Wording

# The field only the report run sets; a scorecard file that carries it is refused (scorecard.read_scorecard).
STAMP = "signed_in_as"


def bound_users(reviewers: Iterable[Any]) -> dict[tuple[str, str], str | None]:
    """(reviewer name, role) -> the Airflow user the plan binds to them (None: no user bound)."""
    return {(r.name, str(r.role)): getattr(r, "airflow_user", None) for r in reviewers}


def unverified_reason(signoff: SignOff, users: dict[tuple[str, str], str | None], words: Wording) -> str | None:
    """Why ``signoff`` does not count (None: it does): nobody signed in for it, the plan binds no user to the
    reviewer, or the user who signed in is not the reviewer's."""
    key = (signoff.reviewer, signoff.role.value)
    args = {"reviewer": signoff.reviewer, "role": words.t(f"role.{signoff.role.value}")}
    if key not in users:
        return words.t("signin.not_listed", **args)
    expected = users[key]
    if not expected:
        return words.t("signin.no_user", **args)
    if not signoff.signed_in_as:
        return words.t("signin.not_signed_in", **args)
    if signoff.signed_in_as != expected:
        return words.t("signin.other_user", user=signoff.signed_in_as, expected=expected, **args)
    return None


def verify_signoffs(signoffs: list[SignOff], reviewers: Iterable[Any], words: Wording
                    ) -> tuple[list[SignOff], list[UnverifiedSignOff]]:
    """The sign-offs that count, and the unverified claims with their reason."""
    users = bound_users(reviewers)
    counted, claims = [], []
    for s in signoffs:
        why = unverified_reason(s, users, words)
        if why is None:
            counted.append(s)
        else:
            claims.append(UnverifiedSignOff(signoff=s, reason=why))
    return counted, claims


def stamp(entries: list[Any], user: str | None) -> list[Any]:
    """The form's sign-off entries, each stamped with the user who triggered the run (any stamp the conf
    carried is replaced: only the run knows who signed in)."""
    return [{**e, STAMP: user or ""} if isinstance(e, dict) else e for e in entries]
