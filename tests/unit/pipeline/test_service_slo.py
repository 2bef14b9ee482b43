"""A service's load rows judged against its SLO: availability over the window, the worst second's p95 and
p99, breach seconds, and no rows never a pass."""

from __future__ import annotations

import json

from gpupoc.pipeline.service_slo import judge, parse_rows
from gpupoc.plan.service_spec import Slo

SLO = Slo(availability_pct=99, p95_ms=100, p99_ms=200)


def lines(*rows: tuple[int, int, float | None, float | None]) -> str:
    out = ["serving log line that is not a row"]
    for i, (sent, ok, p95, p99) in enumerate(rows):
        out.append(json.dumps({"second": i, "ts": f"2026-01-01T00:00:0{i}+00:00", "sent": sent, "ok": ok,
                               "availability_pct": round(100 * ok / sent, 2), "p95_ms": p95, "p99_ms": p99}))
    return "\n".join(out)


def test_a_clean_window_holds():
    rows = parse_rows(lines((10, 10, 20, 30), (10, 10, 40, 60)), "echo", "team-serving", SLO)
    result = judge(rows, SLO, "echo")
    assert result.held and result.availability_pct == 100 and result.worst_p95_ms == 40
    assert result.breach_seconds == 0 and result.seconds == 2 and rows[0].tenant == "team-serving"


def test_one_bad_second_breaks_availability_and_is_a_breach_second():
    rows = parse_rows(lines((10, 10, 20, 30), (10, 0, None, None), (10, 10, 20, 30)), "echo", "t", SLO)
    result = judge(rows, SLO, "echo")
    assert not result.held and result.breach_seconds == 1 and "availability 66.67% < 99%" in result.reason


def test_a_slow_second_breaks_latency_though_all_answered():
    result = judge(parse_rows(lines((10, 10, 150, 190)), "echo", "t", SLO), SLO, "echo")
    assert not result.held and result.reason == "p95 150 ms > 100 ms"


def test_no_rows_is_not_a_pass():
    result = judge(parse_rows("nothing here", "echo", "t", SLO), SLO, "echo")
    assert not result.held and "no traffic rows" in result.reason and result.availability_pct is None
