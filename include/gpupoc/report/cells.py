"""Human cells for the report's tables: the JSON keeps typed values, the page shows words.

Numbers are formatted (thousands separated, at most two decimals, the column's unit), times are local to the
plan's window time zone without microseconds, booleans are words, lists and mappings are joined, and text the
platform or a workload wrote (its messages, logs, a traceback) is a quote, never the report's own sentence.
Every word comes from the string table (``cell.*``, ``unit.*``, ``field.*`` headers, the pipeline's own values
under ``outcome.*``, ``bottleneck.*``, ``action.*``), so a Chinese report says it in Chinese.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from datetime import datetime, timezone
from zoneinfo import ZoneInfo

from gpupoc.report import phrases
from gpupoc.report.wording import Wording

_IN_TEXT = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})")
_ISO = re.compile(r"^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$")
# Columns whose text is the platform's or a workload's own, shown as a quote.
QUOTED = {"message", "platform_message", "outcome_message", "user_visible", "operator_visible", "platform_reason",
          "outcome_reason", "reason_text", "log_excerpt", "events", "alerts", "detail", "end_reason", "end_message"}
# Units by column name (suffix or whole name) -> string-table key of the unit.
UNITS = [("_gpu_hours", "unit.gpu_hours"), ("_seconds", "unit.seconds"), ("_mib", "unit.mib"),
         ("_mib_avg", "unit.mib"), ("util_", "unit.percent"), ("size_bytes", "unit.bytes"), ("_ms", "unit.ms"),
         ("_pct", "unit.percent")]
ONE_DECIMAL = ("unit.seconds", "unit.percent", "unit.ms")  # units whose values show one decimal
TRACEBACK = "Traceback (most recent call last)"
FRAME = re.compile(r'^\s*File "[^"]*", line \d+', re.MULTILINE)
CARET = re.compile(r"^\s*[\^~]+\s*$")
CUT = "[…]"
# Columns whose values are the pipeline's own words (an outcome, a bottleneck), worded by the string table.
VALUE_WORDS = {"outcome": "outcome", "task_outcome": "outcome", "reconstructed_bottleneck": "bottleneck", "action": "action",
               "attempt_action": "action", "ledger_action": "action", "explained_from": "source",
               "scenario": "fault", "task_type": "task_type", "state": "state", "severity": "severity",
               "decision": "audit_decision", "end": "outcome", "injection": "inject_method"}


BREAK_ANYWHERE = {"path", "sha256", "audit_event_id", "gpu_uuid", "actor", "run_dir"}  # long tokens: wrap anywhere


@dataclass(frozen=True)
class Cell:
    """One rendered cell: its text, whether it quotes the platform or a workload, and whether it is one long
    token (a path, a hash) that may wrap anywhere to fit the page."""

    text: str
    quote: bool = False
    token: bool = False
    parts: tuple[tuple[str, bool], ...] = ()  # a cell of the pipeline's words and quotes: (text, quoted) each


def parse_when(value: object) -> datetime | None:
    """An ISO 8601 time (string or datetime) as an aware datetime, or None when it is not one."""
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    if not isinstance(value, str) or not _ISO.match(value.strip()):
        return None
    try:
        dt = datetime.fromisoformat(value.strip().replace("Z", "+00:00"))
    except ValueError:
        return None
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def local_time(value: object, zone: str = "UTC", seconds: bool = True) -> str:
    """``2026-12-01 19:12:03`` in ``zone`` (no microseconds); the value unchanged when it is no time."""
    dt = parse_when(value)
    if dt is None:
        return "" if value is None else str(value)
    return dt.astimezone(ZoneInfo(zone)).strftime("%Y-%m-%d %H:%M:%S" if seconds else "%Y-%m-%d %H:%M")


def number(value: float | int, decimals: int = 2) -> str:
    """``12,345``, ``31.92``, ``1`` (a float without its useless ``.0``)."""
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int) or float(value).is_integer():
        return f"{int(value):,}"
    text = f"{value:,.{decimals}f}".rstrip("0").rstrip(".")
    return text if text not in ("-0", "") else "0"


CURRENCY = re.compile(r"^[A-Z]{3}$")  # a figure whose unit is an ISO 4217 code is an amount of money
NO_MINOR_UNIT = {"JPY", "KRW", "VND", "CLP", "ISK"}  # currencies counted in whole units
MONEY_COLUMNS = ("cost", "_cost", "price_per_hour")  # table columns that hold amounts in the plan's currency


def money(value: float | int, currency: str = "") -> str:
    """An amount as its currency counts it: ``1,234.50`` (``1,235`` in yen), thousands separated."""
    decimals = 0 if currency in NO_MINOR_UNIT else 2
    text = f"{float(value):,.{decimals}f}"
    return text[1:] if text.startswith("-") and not text.strip("-0.,") else text  # no "-0.00"


def figure_value(value: object, unit: str, words: Wording) -> str:
    """A figure's value: an amount of money as its currency counts it, any other number as ``number``."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return "" if value is None else str(value)
    return money(value, unit) if CURRENCY.match(unit or "") else number(value)


def figure_unit(unit: str, words: Wording) -> str:
    """A figure's unit in the report's language: a currency by its name (its code where the language has none)."""
    if CURRENCY.match(unit or ""):
        return words.table.get(f"currency.{unit}", unit)
    return words.table.get(unit, unit)


def _unit(column: str) -> str | None:
    for suffix, key in UNITS:
        if column.endswith(suffix) or (suffix.endswith("_") and column.startswith(suffix)) or column == suffix:
            return key
    return None


def _bytes(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if abs(n) < 1024 or unit == "TiB":
            return f"{number(n, 1)} {unit}"
        n /= 1024
    return str(n)


def quantity(value: float | int, column: str, words: Wording) -> str:
    """A number with its column's unit (``31.9 s``, ``2.5 GPU-h``, ``85 %``)."""
    key = _unit(column)
    if key == "unit.bytes":
        return _bytes(float(value))
    text = number(value, 1 if key in ONE_DECIMAL else 2)
    return words.t("unit.with", value=text, unit=words.t(key)) if key else text


def _structured(value: object) -> object:
    """A list or mapping stored as JSON text, parsed; anything else unchanged."""
    if isinstance(value, str) and value[:1] in "[{":
        try:
            return json.loads(value)
        except ValueError:
            return value
    return value


def _joined(value: object, words: Wording, sep: str | None = None) -> str:
    sep = sep or words.t("list_sep")
    if isinstance(value, dict):
        return sep.join(f"{k}: {_joined(v, words)}" for k, v in value.items())
    if isinstance(value, (list, tuple)):
        return sep.join(_joined(v, words) for v in value)
    if isinstance(value, bool):
        return words.t("cell.yes") if value else words.t("cell.no")
    return "" if value is None else str(value)


def untraced(text: str) -> tuple[str, bool]:
    """``text`` without the frames of a Python traceback in it (file lines, their code, the carets), keeping
    what surrounds them and the exception; True when there was one."""
    lines = text.splitlines()
    if not any(FRAME.match(ln) for ln in lines):
        return text, False
    keep: list[str] = []
    skip = False
    for i, ln in enumerate(lines):
        following = lines[i + 1] if i + 1 < len(lines) else ""
        if TRACEBACK in ln:
            keep += [h for h in [ln.split(TRACEBACK)[0].strip()] if h]
            _cut(keep)
            continue
        if skip or CARET.match(ln):
            skip = False
            continue
        if FRAME.match(ln):
            skip = not FRAME.match(following)  # the frame's code line follows it
            _cut(keep)
            continue
        if CARET.match(following):  # a code line whose frame was cut off: keep the words before it
            head = ln.rsplit("; ", 1)[0] if "; " in ln else ""
            keep += [head] if head else []
            _cut(keep)
            continue
        keep.append(ln)
    return " ".join(" ".join(keep).split()), True


def _cut(keep: list[str]) -> None:
    """Mark where frames were left out (once per run of them)."""
    if not keep or keep[-1] != CUT:
        keep.append(CUT)


def _quote(text: str, words: Wording) -> str:
    """The platform's text on one line; a traceback in it shortened to its exception (``[…]`` where its frames
    were)."""
    return untraced(text)[0] if FRAME.search(text) else " ".join(text.split())


def cell(value: object, column: str, words: Wording, zone: str = "UTC") -> Cell:
    """The human form of one table value in ``column`` (its unit is in the column's header, a size excepted)."""
    if value is None or (isinstance(value, (float, datetime)) and value != value):  # NaN, NaT: no value
        return Cell("")
    if isinstance(value, bool):
        return Cell(words.t("cell.yes") if value else words.t("cell.no"))
    if isinstance(value, (int, float)):
        if column == "size_bytes":
            return Cell(_bytes(float(value)))
        if column.endswith(MONEY_COLUMNS):  # an amount in the plan's currency (named by the figures and prices)
            return Cell(money(value))
        return Cell(number(value, 1 if _unit(column) in ONE_DECIMAL else 2))
    if column in VALUE_WORDS and f"{VALUE_WORDS[column]}.{value}" in words.table:
        return Cell(words.table[f"{VALUE_WORDS[column]}.{value}"])
    if parse_when(value) is not None:
        return Cell(local_time(value, zone))
    value = _structured(value)
    if isinstance(value, (list, tuple, dict)):
        sep = words.t("reason_sep") if column in QUOTED else None
        return Cell(_joined(value, words, sep), quote=column in QUOTED)
    text = str(value)
    mixed = phrases.worded(text, words, lambda at: local_time(at, zone)) if column in phrases.COMPOSED else None
    if mixed and not all(quoted for _, quoted in mixed):
        mixed = [(_quote(p, words) if quoted else p, quoted) for p, quoted in mixed]
        return Cell("".join(p for p, _ in mixed), parts=tuple(mixed))
    if mixed and column in phrases.ONLY_SENTENCES:  # none of it is the report's own: a quote
        return Cell(_quote(text, words), quote=True)
    if column in QUOTED or FRAME.search(text):
        return Cell(_quote(text, words), quote=True)
    if column not in BREAK_ANYWHERE:  # the pipeline's own sentences: the times in them local too
        text = _IN_TEXT.sub(lambda m: local_time(m.group(0), zone), text)
    return Cell(text, token=column in BREAK_ANYWHERE)


def header(column: str, words: Wording, prefix: str = "") -> str:
    """An evidence column's header: ``<prefix>.<name>`` or ``field.<name>`` from the string table (the name
    itself when it has neither)."""
    return words.table.get(f"{prefix}.{column}") or words.table.get(f"field.{column}", column)
