"""Parsers of single cell values. Each raises ``ValueProblem`` with what was expected and how to fix it."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from gpupoc.exceptions import ConfigError

# Cell values that mean "no value" (Slurm writes Unknown/None for times that never happened).
NULLS = frozenset({"", "none", "unknown", "nan", "nat", "null", "n/a", "na"})
_OFFSET_RE = re.compile(r"^([+-])(\d{2}):?(\d{2})$")
_ELAPSED_RE = re.compile(r"^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)(?:\.(\d+))?$")
_NUMBER_RE = re.compile(r"^[+-]?\d+(\.\d*)?$")
# The table's integer columns are int32 (``gpupoc.history.model.COLUMNS``): a count or exit code beyond this
# would not fit, so it is a bad cell of its row rather than an overflow when the table is written.
INT32_MAX = 2**31 - 1
# Seconds a run or a wait may last: the span of times Python represents (years 1 to 9999), so any time
# computed from a job's submission and its seconds stays a time.
MAX_SECONDS = (datetime.max - datetime.min).total_seconds()


class ValueProblem(ValueError):
    """A cell that cannot be read: ``message`` says what was expected, ``fix`` what to do."""

    def __init__(self, message: str, fix: str):
        self.message = message
        self.fix = fix
        super().__init__(f"{message}; {fix}")


def is_null(text: str | None) -> bool:
    return text is None or text.strip().lower() in NULLS


def parse_zone(name: str, option: str = "--timezone") -> tzinfo:
    """An IANA zone name (``Asia/Shanghai``, ``UTC``) or a fixed offset (``+08:00``)."""
    m = _OFFSET_RE.match(name.strip())
    if m:
        sign = -1 if m.group(1) == "-" else 1
        return timezone(sign * timedelta(hours=int(m.group(2)), minutes=int(m.group(3))))
    try:
        return ZoneInfo(name.strip())
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(option, [f"{option}: unknown time zone {name!r}; use an IANA name such as UTC or "
                                   "Asia/Shanghai, or an offset such as +08:00"]) from exc


def offset_label(dt: datetime) -> str:
    """``+08:00`` for a datetime eight hours ahead of UTC."""
    off = dt.utcoffset() or timedelta(0)
    minutes = int(off.total_seconds() // 60)
    sign = "-" if minutes < 0 else "+"
    return f"{sign}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def parse_text(text: str) -> str | None:
    return None if is_null(text) else text.strip()


def whole_number(text: str) -> int | None:
    """``8``, ``-3`` or ``8.0`` as the exact int it writes (no float rounding of long digit strings); None when
    it is no whole number."""
    t = text.strip()
    if not _NUMBER_RE.match(t):
        return None
    whole, _, frac = t.partition(".")
    return int(whole) if not frac.strip("0") else None


def parse_count(text: str) -> int | None:
    """A whole number from 0 to INT32_MAX (``8`` or ``8.0``); None when empty."""
    if is_null(text):
        return None
    value = whole_number(text)
    if value is None or value < 0:
        raise ValueProblem(f"expected a whole number >= 0, got {text!r}", "write a count such as 8")
    if value > INT32_MAX:
        raise ValueProblem(f"count {text.strip()} is out of range (at most {INT32_MAX})",
                           "write the real count; a number this large is a corrupted cell")
    return value


def parse_exit_code(text: str) -> int | None:
    """An exit code: ``1``, or Slurm's ``code:signal`` (``1:0`` -> 1, ``0:9`` -> 128 + 9)."""
    if is_null(text):
        return None
    code, _, signal = text.strip().partition(":")
    code_i, signal_i = whole_number(code), whole_number(signal or "0")
    if code_i is None or signal_i is None:
        raise ValueProblem(f"expected an exit code such as 1 or Slurm's 1:0, got {text!r}",
                           "write the code as a number")
    value = 128 + signal_i if code_i == 0 and signal_i else code_i
    if not -INT32_MAX - 1 <= value <= INT32_MAX:
        raise ValueProblem(f"exit code {text.strip()} is out of range ({-INT32_MAX - 1} to {INT32_MAX})",
                           "write the code the job exited with (0 to 255 on Linux)")
    return value


def parse_seconds(text: str) -> float | None:
    """Seconds >= 0: ``124``, ``124.5`` or an elapsed time ``[D-][HH:]MM:SS[.frac]`` (``1-02:03:04``)."""
    if is_null(text):
        return None
    t = text.strip()
    value: float | None = None
    if _NUMBER_RE.match(t) and not t.startswith("-"):
        value = float(t)
    elif m := _ELAPSED_RE.match(t):
        days, hours, minutes, seconds, frac = m.groups()
        whole = int(days or 0) * 86400 + int(hours or 0) * 3600 + int(minutes) * 60 + int(seconds)
        value = float(min(whole, 2 * MAX_SECONDS)) + (float(f"0.{frac}") if frac else 0.0)  # no int->float overflow
    if value is None:
        raise ValueProblem(f"expected seconds >= 0 or an elapsed time such as 1-02:03:04, got {text!r}",
                           "write the number of seconds")
    if not value <= MAX_SECONDS:  # also refuses inf from a long digit string
        raise ValueProblem(f"{t} seconds is out of range (at most {MAX_SECONDS:.0f}, the span of years 1-9999)",
                           "write the real run time or wait; a number this large is a corrupted cell")
    return value


def parse_time(text: str) -> datetime | None:
    """ISO 8601 (``2023-03-01 00:18:22+08:00``, ``2024-03-01T10:00:00``) or Unix seconds (UTC).

    A time without an offset stays naive: the reader places it in the zone the user gave.
    """
    if is_null(text):
        return None
    t = text.strip()
    if _NUMBER_RE.match(t):
        try:
            return datetime.fromtimestamp(float(t), tz=timezone.utc)
        except (OverflowError, OSError, ValueError):
            raise ValueProblem(f"Unix time {t} is out of range (a time in years 1-9999)",
                               "write the time in ISO 8601 or as Unix seconds such as 1709287200") from None
    try:
        dt = datetime.fromisoformat(t.replace("Z", "+00:00"))
    except ValueError:
        raise ValueProblem(f"expected an ISO 8601 time such as 2024-03-01T10:00:00 or 2023-03-01 00:18:22+08:00, "
                           f"got {text!r}", "write the time in ISO 8601 (or Unix seconds)") from None
    return dt
