"""Times, once for the whole package: aware UTC ``datetime`` inside, RFC 3339 with microseconds outside."""

from __future__ import annotations

import re
from datetime import datetime, timezone

_RFC3339 = re.compile(r"^(\d{4}-\d{2}-\d{2})[T ](\d{2}:\d{2}:\d{2})(?:\.(\d+))?(Z|z|[+-]\d{2}:?\d{2})?$")


# Later than any moment: sorts a missing time last.
NEVER = datetime.max.replace(tzinfo=timezone.utc)


def utcnow() -> datetime:
    """Now, aware, in UTC."""
    return datetime.now(timezone.utc)


def parse_time(value: object) -> datetime | None:
    """An RFC 3339 string (``Z`` or an offset, any number of fraction digits: audit logs use micro-, logs and
    Kubernetes nanoseconds), a ``datetime`` (naive means UTC) or None/"" -> aware datetime or None.
    Anything else raises ValueError naming the value."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    m = _RFC3339.match(str(value).strip())
    if not m:
        try:  # other ISO 8601 forms (a date alone, minutes only)
            dt = datetime.fromisoformat(str(value).strip())
        except ValueError:
            raise ValueError(f"timestamp: expected RFC 3339 like 2026-01-01T00:00:00.000000Z, got {value!r}") from None
        return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)
    date, clock, frac, tz = m.groups()
    tz = "+00:00" if tz in (None, "Z", "z") else (tz if ":" in tz else f"{tz[:3]}:{tz[3:]}")
    return datetime.fromisoformat(f"{date}T{clock}.{(frac or '0')[:6].ljust(6, '0')}{tz}")


def rfc3339(dt: datetime | None) -> str:
    """``2026-01-01T00:00:00.123456Z`` ("" for None)."""
    if dt is None:
        return ""
    dt = dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)
    return dt.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")
