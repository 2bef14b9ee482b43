"""A service's load rows judged against its SLO: availability over the window, the worst second's p95 and
p99, breach seconds, and no rows never a pass; the load generator's own lag counted apart, never failing the
SLO, and too much of it leaving the SLO not verified, while a slow platform and errors still fail it."""

from __future__ import annotations

import json

from gpupoc.pipeline.service_slo import judge, parse_rows
from gpupoc.plan.service_spec import Slo
from gpupoc.workload.lag import Sample, second_row

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


# The load generator's own lag (workload/lag.py): synthetic per-request timings, a fake clock in seconds, summed
# into its per-second rows as the ``load`` mode writes them, then judged.
LAG_SLO = Slo(availability_pct=99, p95_ms=500, p99_ms=1000, max_harness_lag_pct=50)


def request(second: int, i: int, send_lag_ms: float = 0.0, client_ms: float = 20.0, server_ms: float | None = 15.0,
            status: int = 200) -> Sample:
    due = 1000.0 + second + i * 0.2
    sent = due + send_lag_ms / 1000
    return Sample(due=due, sent=sent, read=sent + client_ms / 1000, status=status, server_ms=server_ms)


def judged(seconds: list[list[Sample]], slo: Slo = LAG_SLO):
    text = "\n".join(json.dumps({"second": n, "ts": f"2026-01-01T00:00:{n:02d}+00:00", **second_row(samples)})
                     for n, samples in enumerate(seconds))
    rows = parse_rows(text, "echo", "team-serving", slo)
    return rows, judge(rows, slo, "echo")


def test_requests_the_harness_sent_late_never_make_the_slo_fail():
    # second 2: the generator stalled 900 ms, so its requests left late and their answers took 1.2 s to read
    seconds = [[request(s, i) for i in range(5)] for s in range(10)]
    seconds[2] = [request(2, i, send_lag_ms=900, client_ms=1200) for i in range(5)]
    rows, result = judged(seconds)
    assert rows[2].p95_ms > 1000 and not rows[2].breach, "the second's own reading is kept, not held against it"
    assert result.held is True and result.late_sent == 5 and result.harness_lag_pct == 10.0
    assert result.reason.endswith("harness lag: 5 of 50 requests sent late, 5 answers read late, judged on the "
                                  "replica's own time")


def test_a_slow_platform_still_fails_its_slo_whatever_the_harness_lag():
    # every answer takes the replica 800 ms itself; most were also sent late by a busy generator
    seconds = [[request(s, i, send_lag_ms=300 if i < 4 else 0, client_ms=820, server_ms=800) for i in range(5)]
               for s in range(4)]
    _, result = judged(seconds)
    assert result.held is False and not result.harness_lag and result.harness_lag_pct == 80.0
    assert result.reason.startswith("p95 816 ms > 500 ms") and result.breach_seconds == 4


def test_heavy_harness_lag_leaves_the_slo_not_verified_naming_the_harness():
    # in every second the generator sent 3 of 5 requests 400 ms late and read 4 of 5 answers 700 ms late
    seconds = [[request(s, i, send_lag_ms=400 if i < 3 else 0, client_ms=700 if i < 4 else 20) for i in range(5)]
               for s in range(10)]
    _, result = judged(seconds)
    assert result.held is None and result.harness_lag and (result.late_sent, result.late_read) == (30, 40)
    assert result.reason == ("not verified: the load generator sent 60% of requests late and read 80% of answers "
                             "late (80% of the window, more than 50%): harness lag, not the platform")


def test_the_plan_s_bound_decides_how_much_lag_leaves_the_slo_not_verified():
    seconds = [[request(s, i, send_lag_ms=400 if i < 3 else 0) for i in range(5)] for s in range(10)]
    assert judged(seconds)[1].held is None
    assert judged(seconds, LAG_SLO.model_copy(update={"max_harness_lag_pct": 60}))[1].held is True


def test_errors_are_never_excused_by_harness_lag():
    # a dead endpoint refuses the late requests: lag is heavy, yet the SLO fails on availability
    seconds = [[request(s, i, send_lag_ms=600, status=0, server_ms=None) if i < 2 else request(s, i, send_lag_ms=600)
                for i in range(5)] for s in range(10)]
    _, result = judged(seconds)
    assert result.held is False and not result.harness_lag and result.availability_pct == 60.0
    assert result.reason.startswith("availability 60% < 99%") and "harness lag: 50 of 50" in result.reason


def test_rows_of_a_generator_without_lag_accounting_are_judged_on_the_client_s_reading():
    rows = parse_rows(lines((10, 10, 700, 800)), "echo", "t", LAG_SLO)
    assert rows[0].judged_p95_ms == 700 and rows[0].breach and judge(rows, LAG_SLO, "echo").held is False
