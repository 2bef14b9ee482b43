"""The harness's API budget on a real API server: kube-apiserver's own metrics and audit log, read apart.

``parse_metrics`` reads the Prometheus text of ``/metrics`` (only the families the budget needs);
``delta`` is what a wave added between two reads. ``seat_seconds`` estimates API Priority and Fairness's work
per flow schema: the server exports execution seconds and estimated seats apart, so a flow schema's
seat-seconds are its execution seconds times its mean seats per request (a LIST of many objects counts up to
10 seats). ``audit_requests`` counts the audit log's requests per gpupoc component, by the User-Agent each
component's client sends (``gpupoc-<component>/<version>``). ``judge`` holds the figures against the targets:
a figure that could not be measured is *not verified*, never a pass.
"""

from __future__ import annotations

import json
import re
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterable

FAMILIES = ("apiserver_request_total", "apiserver_response_sizes_sum", "apiserver_response_sizes_count",
            "apiserver_flowcontrol_request_execution_seconds_sum",
            "apiserver_flowcontrol_work_estimated_seats_sum", "apiserver_flowcontrol_work_estimated_seats_count",
            "apiserver_flowcontrol_dispatched_requests_total", "apiserver_flowcontrol_rejected_requests_total")
_LINE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
AGENT = re.compile(r"^gpupoc-([a-z0-9-]+)/")

Series = tuple[str, frozenset]  # (metric name, its labels as (name, value) pairs)


class MetricsError(ValueError):
    """A /metrics text that cannot be read."""


def parse_metrics(text: str, families: Iterable[str] = FAMILIES) -> dict[Series, float]:
    """The samples of ``families`` in a Prometheus text exposition."""
    wanted = set(families)
    out: dict[Series, float] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line or line.startswith("#"):
            continue
        m = _LINE.match(line.strip())
        if m is None:
            raise MetricsError(f"/metrics line {n}: not a Prometheus sample: {line[:120]!r}")
        if m.group(1) not in wanted:
            continue
        try:
            value = float(m.group(3))
        except ValueError:
            raise MetricsError(f"/metrics line {n}: value {m.group(3)!r} is not a number") from None
        out[(m.group(1), frozenset(_LABEL.findall(m.group(2) or "")))] = value
    return out


def delta(before: dict[Series, float], after: dict[Series, float]) -> dict[Series, float]:
    """What each series gained between two reads (a series new in ``after`` counts from 0)."""
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v - before.get(k, 0.0)}


def by(samples: dict[Series, float], name: str, *labels: str) -> dict[tuple[str, ...], float]:
    """The samples of ``name`` summed by ``labels``."""
    out: Counter = Counter()
    for (metric, lab), v in samples.items():
        if metric == name:
            d = dict(lab)
            out[tuple(d.get(x, "") for x in labels)] += v
    return dict(out)


def seat_seconds(samples: dict[Series, float]) -> dict[str, float]:
    """flow schema -> estimated seat-seconds (execution seconds x mean estimated seats; see the module)."""
    secs = by(samples, "apiserver_flowcontrol_request_execution_seconds_sum", "flow_schema")
    seats = by(samples, "apiserver_flowcontrol_work_estimated_seats_sum", "flow_schema")
    count = by(samples, "apiserver_flowcontrol_work_estimated_seats_count", "flow_schema")
    return {fs: s * (seats.get((fs,), 0.0) / count[(fs,)] if count.get((fs,)) else 1.0)
            for (fs,), s in secs.items()}


def component_of(agent: str) -> str:
    """The gpupoc component a User-Agent names, else ``other``."""
    m = AGENT.match(agent or "")
    return m.group(1) if m else "other"


@dataclass
class AuditCount:
    """Requests per (component, verb, resource) from the audit log, and the codes answered."""

    requests: Counter = field(default_factory=Counter)
    codes: Counter = field(default_factory=Counter)     # (component, code)
    lines: int = 0
    unreadable: int = 0

    def of(self, component: str, verb: str | None = None) -> int:
        return sum(n for (c, v, _), n in self.requests.items() if c == component and verb in (None, v))


def audit_requests(path: Path, since: str = "", until: str = "") -> AuditCount:
    """The audit log's requests (stage ResponseComplete, or Panic) received in [since, until) (RFC 3339 text;
    empty: unbounded), counted per component by User-Agent; the log's rotated files (``audit-<time>.log``)
    are read too."""
    out = AuditCount()
    files = sorted(path.parent.glob(f"{path.stem}-*{path.suffix}")) + ([path] if path.is_file() else [])
    for name in files:
        _count(name, since, until, out)
    return out


def _count(path: Path, since: str, until: str, out: AuditCount) -> None:
    with path.open(encoding="utf-8", errors="replace") as f:
        for line in f:
            out.lines += 1
            try:
                e = json.loads(line)
            except ValueError:
                out.unreadable += 1
                continue
            if e.get("stage") not in ("ResponseComplete", "Panic"):
                continue
            at = str(e.get("requestReceivedTimestamp") or "")
            if (since and at < since) or (until and at >= until):
                continue
            comp = component_of(str(e.get("userAgent") or ""))
            out.requests[(comp, str(e.get("verb") or ""), str((e.get("objectRef") or {}).get("resource") or ""))] += 1
            out.codes[(comp, int((e.get("responseStatus") or {}).get("code") or 0))] += 1


@dataclass(frozen=True)
class Target:
    """One target and whether the measured figure meets it: pass, miss or not verified (why)."""

    name: str
    verdict: str
    figure: str

    def line(self) -> str:
        return f"{self.verdict:<13} {self.name}: {self.figure}"


def _le(name: str, value: float | None, limit: float, unit: str, why: str = "") -> Target:
    if value is None:
        return Target(name, "not verified", why or "not measured")
    return Target(name, "pass" if value <= limit else "miss", f"{value:,.2f} {unit} (target <= {limit:g})")


def judge(*, pods: int, requests: int | None, bytes_read: int | None, full_lists_after_first: int | None,
          relists_after_gone: int | None, gone_answers: int | None, harness_seat_share: float | None,
          seat_why: str = "") -> list[Target]:
    """The issue's targets for one wave's observation (see the module)."""
    out = [_le("full LISTs after the first (relists after 410 apart)", full_lists_after_first, 0, "LISTs")]
    if gone_answers:
        ok = relists_after_gone is not None and relists_after_gone >= 1
        out.append(Target("a relist after 410", "pass" if ok else "miss",
                          f"{gone_answers} 410 answer(s), {relists_after_gone} relist(s)"))
    else:
        out.append(Target("a relist after 410", "not verified",
                          "no watch was answered 410 Gone during the wave (the unit tests of the watch cache "
                          "show it)"))
    per = (lambda v: None if v is None or pods <= 0 else v / pods)
    kb = per(bytes_read)
    out.append(_le("observation bytes per pod", None if kb is None else kb / 1000, 50, "KB"))
    out.append(_le("observation requests per pod", per(requests), 1, "requests"))
    out.append(_le("the harness's share of seat-seconds (creation and release apart)",
                   None if harness_seat_share is None else 100 * harness_seat_share, 1, "%", seat_why))
    return out
