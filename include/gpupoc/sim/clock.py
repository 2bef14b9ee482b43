"""Wall-clock timestamps in the formats the Kubernetes API uses (never virtual time)."""

from __future__ import annotations

import time
from datetime import datetime, timezone

_second_text: tuple[int, str] = (-1, "")  # the last whole second rfc3339() wrote, and its text


def now() -> datetime:
    return datetime.now(timezone.utc)


def rfc3339(ts: datetime | None = None) -> str:
    """Second precision, as metadata timestamps: ``2026-11-30T07:22:56Z`` (now's text is kept for its second:
    the API server writes thousands of timestamps a second under a wave)."""
    if ts is not None:
        return ts.strftime("%Y-%m-%dT%H:%M:%SZ")
    global _second_text
    second = int(time.time())
    if second != _second_text[0]:
        _second_text = (second, time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(second)))
    return _second_text[1]


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
