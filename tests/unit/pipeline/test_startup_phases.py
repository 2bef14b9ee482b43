"""Start-up latency per phase: the most precise moment first, p99 beside the SLO, refusal above 10 % errored."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

from gpupoc.pipeline.pod_transitions import PodTransitions
from gpupoc.pipeline.startup_phases import phase_row, phase_rows

T0 = datetime(2026, 1, 1, tzinfo=timezone.utc)


def ms(n: float) -> datetime:
    return T0 + timedelta(milliseconds=n)


def pod(i: int, scheduled_ms: float, running_ms: float, ready_ms: float, failed: bool = False) -> PodTransitions:
    p = PodTransitions("ns", f"p{i}", f"item-{i}", created_at=T0)
    p.first_true = {"PodScheduled": T0 + timedelta(seconds=1), "ContainersReady": T0 + timedelta(seconds=2),
                    "Ready": T0 + timedelta(seconds=2)}
    p.received = {"PodScheduled": ms(scheduled_ms + 5), "Running": ms(running_ms), "Ready": ms(ready_ms)}
    p.scheduled_event_at = ms(scheduled_ms)
    if failed:
        p.first_true, p.received, p.phases = {}, {}, ["Pending", "Failed"]
    return p


def test_the_scheduled_events_microseconds_come_before_the_conditions_whole_seconds():
    row = phase_row("scheduling", [pod(0, 123.4, 400, 450)])
    assert row.p50_ms == 123 and "Scheduled event" in row.sources


def test_startup_is_creation_to_running_as_received_and_is_judged_against_the_slo():
    pods = [pod(i, 100, 1000 + i * 100, 1200 + i * 100) for i in range(100)]
    row = phase_row("startup", pods)
    assert (row.p50_ms, row.p90_ms, row.p99_ms, row.max_ms) == (5900, 9900, 10800, 10900)
    assert row.slo_p99_ms == 5000 and row.within_slo is False
    assert phase_row("startup", pods[:30]).within_slo is True


def test_coverage_counts_the_pods_measured_against_the_pods_seen():
    waiting = PodTransitions("ns", "never", "item-x", created_at=T0)
    row = phase_row("readiness", [pod(0, 10, 20, 30), waiting])
    assert row.pods == 1 and row.pods_seen == 2 and row.coverage == 0.5


def test_figures_are_refused_when_more_than_a_tenth_of_the_pods_errored():
    pods = [pod(i, 10, 20, 30) for i in range(8)] + [pod(8, 0, 0, 0, True), pod(9, 0, 0, 0, True)]
    row = phase_row("startup", pods)
    assert row.refused and "2 of 10" in row.refused
    assert row.p99_ms is None and row.within_slo is None
    assert phase_row("startup", pods[:9] + [pod(9, 10, 20, 30)]).refused is None


def test_every_phase_has_a_row_and_condition_times_serve_when_nothing_was_received():
    p = PodTransitions("ns", "p", "i", created_at=T0, first_true={"PodScheduled": T0 + timedelta(seconds=2),
                                                                  "ContainersReady": T0 + timedelta(seconds=3),
                                                                  "Ready": T0 + timedelta(seconds=4)})
    rows = {r.phase: r for r in phase_rows([p])}
    assert set(rows) == {"scheduling", "starting", "readiness", "startup", "created_to_ready"}
    assert rows["created_to_ready"].p50_ms == 4000 and rows["startup"].sources == "creationTimestamp → condition"
