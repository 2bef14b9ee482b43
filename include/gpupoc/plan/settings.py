"""The POC window, the evidence sources and the report settings."""

from __future__ import annotations

import re
from datetime import datetime
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from pydantic import Field, field_validator, model_validator

from gpupoc.common.fields import ServiceUrl, StrictModel
from gpupoc.common.outcomes import Decision, Tier
from gpupoc.plan.audit_spec import AuditSpec, FileAudit

_PRESETS = {"@once", "@hourly", "@daily", "@weekly", "@monthly", "@yearly", "@continuous", "@midnight"}
_CRON_FIELD = re.compile(r"^[0-9*/,\-A-Za-z?LW#]+$")
# An Airflow user name as the simple auth manager's ``simple_auth_manager_users`` (``name:role,...``) and the
# identity providers behind other auth managers write it: no separators, no spaces.
_AIRFLOW_USER = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._@-]{0,63}$")


class Window(StrictModel):
    """When the POC runs: daily (or cron) runs between start and end."""

    start: datetime
    end: datetime
    schedule: str = "@daily"
    timezone: str = "UTC"

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, v: str) -> str:
        try:
            ZoneInfo(v)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError("expected an IANA time zone such as 'UTC' or 'Asia/Shanghai'") from None
        return v

    @field_validator("schedule")
    @classmethod
    def _valid_schedule(cls, v: str) -> str:
        if v in _PRESETS:
            return v
        fields = v.split()
        if len(fields) not in (5, 6) or not all(_CRON_FIELD.match(f) for f in fields):
            raise ValueError("expected a cron expression ('0 2 * * *') or a preset such as '@daily'")
        try:
            from croniter import croniter
        except ImportError:  # pragma: no cover - croniter ships with Airflow
            return v
        if not croniter.is_valid(v):
            raise ValueError("expected a valid cron expression ('0 2 * * *') or a preset such as '@daily'")
        return v

    @model_validator(mode="after")
    def _end_after_start(self) -> "Window":
        zone = ZoneInfo(self.timezone)
        start = self.start if self.start.tzinfo else self.start.replace(tzinfo=zone)
        end = self.end if self.end.tzinfo else self.end.replace(tzinfo=zone)
        if end <= start:
            raise ValueError(f"end {self.end.isoformat()} must be after start {self.start.isoformat()}")
        return self

    def aware(self, value: datetime) -> datetime:
        """``value`` with the window's time zone if it has none."""
        return value if value.tzinfo else value.replace(tzinfo=ZoneInfo(self.timezone))


class EvidenceSources(StrictModel):
    """Where evidence beyond the Kubernetes API comes from (URL or Airflow connection id).

    Unset sources fall back to the local monitoring stack's ``stack.json`` (gpupoc.monitoring.sources).
    """

    prometheus_url: ServiceUrl | None = None
    prometheus_conn_id: str | None = None
    alertmanager_url: ServiceUrl | None = None
    alertmanager_conn_id: str | None = None
    audit_log_path: str | None = Field(default=None, description="API server audit log (JSON lines); the same as "
                                       "audit: {kind: file, path: ...}")
    audit: AuditSpec | None = Field(default=None, description="where the audit events come from: file, webhook "
                                    "or command (gpupoc.plan.audit_spec)")
    alert_receiver_record: str | None = Field(default=None, description="webhook receiver's alert record (JSON lines)")

    @model_validator(mode="after")
    def _not_both(self) -> "EvidenceSources":
        for what in ("prometheus", "alertmanager"):
            if getattr(self, f"{what}_url") and getattr(self, f"{what}_conn_id"):
                raise ValueError(f"set {what}_url or {what}_conn_id, not both")
        if self.audit is not None and self.audit_log_path:
            raise ValueError("set audit or audit_log_path, not both (audit_log_path is audit: {kind: file, path: "
                             "...}); remove audit_log_path")
        return self

    @property
    def audit_spec(self) -> AuditSpec | None:
        """The audit source: ``audit``, else a file source from ``audit_log_path``, else None."""
        if self.audit is not None:
            return self.audit
        return FileAudit(kind="file", path=self.audit_log_path) if self.audit_log_path else None


class DecisionRules(StrictModel):
    """What a failing or unverified item of each tier decides (defaults follow the method)."""

    must_fail: Decision = Decision.POSTPONE
    must_not_verified: Decision = Decision.POSTPONE
    key_fail: Decision = Decision.LIMITED_GO_LIVE
    key_not_verified: Decision = Decision.LIMITED_GO_LIVE
    experience_fail: Decision = Decision.LATER_OPTIMIZATION
    experience_not_verified: Decision = Decision.LATER_OPTIMIZATION
    tier_overrides: dict[str, Tier] = Field(default_factory=dict, description="item id or check id -> tier")
    pass_score: float = Field(default=3.0, ge=1, le=5, description="mean reviewer score an experience item needs")

    @classmethod
    def from_any(cls, value: object) -> "DecisionRules":
        """From a plan's ``report.decision_rules`` (model or dict) or None."""
        if value is None:
            return cls()
        if isinstance(value, cls):
            return value
        if hasattr(value, "model_dump"):
            value = value.model_dump(mode="json")
        return cls.model_validate(value)


class Reviewer(StrictModel):
    """Who signs off in the acceptance meeting: security the must items, platform (operations) the key items,
    business (algorithm teams) the experience items, management the decision."""

    name: str = Field(min_length=1)
    role: Literal["security", "platform", "business", "management"]
    airflow_user: str | None = Field(default=None, description="the Airflow user this reviewer signs in as: a "
                                     "sign-off from the poc_report trigger form counts only when this user "
                                     "triggered the run; without one, the reviewer's sign-offs are unverified")

    @field_validator("airflow_user")
    @classmethod
    def _user_name(cls, v: str | None) -> str | None:
        if v is not None and not _AIRFLOW_USER.match(v):
            raise ValueError("expected the Airflow user name the reviewer signs in with (letters, digits and "
                             "'._@-', starting with a letter or digit, at most 64 characters)")
        return v


def reviewer_problems(reviewers: list[Reviewer], path: str = "report.reviewers") -> list[str]:
    """One Airflow user signs for one reviewer, and one reviewer signs in as one user."""
    errors, user_of, name_of = [], {}, {}
    for i, r in enumerate(reviewers):
        if r.airflow_user is None:
            continue
        first = name_of.setdefault(r.airflow_user, (r.name, i))
        if first[0] != r.name:
            errors.append(f"{path}[{i}].airflow_user: {r.airflow_user!r} already signs for {first[0]!r} "
                          f"({path}[{first[1]}]); give each reviewer their own Airflow user")
        bound = user_of.setdefault(r.name, (r.airflow_user, i))
        if bound[0] != r.airflow_user:
            errors.append(f"{path}[{i}].airflow_user: {r.name!r} already signs in as {bound[0]!r} "
                          f"({path}[{bound[1]}]); one reviewer signs in as one Airflow user")
    return errors


class ReportSettings(StrictModel):
    language: Literal["zh", "en"] = "en"
    decision_rules: DecisionRules = Field(default_factory=DecisionRules)
    reviewers: list[Reviewer] = Field(default_factory=list)
    output_dir: str | None = Field(default=None, description="defaults to <evidence_root>/report")
    scorecard: str | None = Field(default=None, description="the reviewers' scorecard file (YAML/JSON, relative to "
                                  "the plan) for the experience items; scores from the report's trigger form "
                                  "take precedence")
