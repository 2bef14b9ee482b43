"""Wall-clock timestamps in the formats the Kubernetes API uses (never virtual time)."""

from __future__ import annotations

from datetime import datetime, timezone


def now() -> datetime:
    return datetime.now(timezone.utc)


def rfc3339(ts: datetime | None = None) -> str:
    """Second precision, as metadata timestamps: ``2026-11-30T07:22:56Z``."""
    return (ts or now()).strftime("%Y-%m-%dT%H:%M:%SZ")


def rfc3339_micro(ts: datetime | None = None) -> str:
    """Microsecond precision, as ``eventTime`` and audit timestamps."""
    return (ts or now()).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def rfc3339_nano(ts: datetime | None = None) -> str:
    """Nanosecond layout used in log timestamps (``timestamps=true``)."""
    return (ts or now()).strftime("%Y-%m-%dT%H:%M:%S.%f000Z")


def parse(value: str) -> datetime:
    """Parse any of the layouts above back into an aware datetime."""
    v = value.rstrip("Z")
    if "." in v:
        head, frac = v.split(".", 1)
        v = f"{head}.{frac[:6]}"
        return datetime.strptime(v, "%Y-%m-%dT%H:%M:%S.%f").replace(tzinfo=timezone.utc)
    return datetime.strptime(v, "%Y-%m-%dT%H:%M:%S").replace(tzinfo=timezone.utc)
