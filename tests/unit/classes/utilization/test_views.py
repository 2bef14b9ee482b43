"""Utilization views: GPU-hours, percentiles, memory bands and queue pressure from synthetic samples."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pandas as pd
import pytest

from gpupoc.monitoring.promclient import PrometheusClient
from gpupoc.monitoring.results import CollectorResult, Window
from gpupoc.classes.utilization.rows import utilization_rows
from gpupoc.classes.utilization.views import mem_band, queue_pressure, utilization_views, views_frame

T0 = datetime(2026, 3, 1, 10, 0, tzinfo=timezone.utc)
STEP = 60.0


def samples() -> pd.DataFrame:
    """Two hours of one-minute samples: GPU-1 trains for team-a at 90%, GPU-2 is held idle by team-b for the
    first hour (0%), GPU-3 serves team-b inference at 30% for the second hour, GPU-4 is never allocated."""
    rows = []
    for i in range(120):
        ts = T0 + timedelta(seconds=STEP * i)
        rows.append(dict(timestamp=ts, uuid="GPU-1", hostname="n1", namespace="team-a", pod="train", util=90.0,
                         mem_used_mib=60000.0, allocated=True, task_type="training", tenant="team-a", pool="training"))
        held = i < 60
        rows.append(dict(timestamp=ts, uuid="GPU-2", hostname="n1", namespace="team-b" if held else "",
                         pod="idle" if held else "", util=0.0, mem_used_mib=500.0 if held else 0.0, allocated=held,
                         task_type="idle" if held else "", tenant="team-b" if held else "", pool="training"))
        serving = i >= 60
        rows.append(dict(timestamp=ts, uuid="GPU-3", hostname="n2", namespace="team-b" if serving else "",
                         pod="serve" if serving else "", util=30.0 if serving else 0.0,
                         mem_used_mib=20000.0 if serving else 0.0, allocated=serving,
                         task_type="inference" if serving else "", tenant="team-b" if serving else "",
                         pool="inference"))
        rows.append(dict(timestamp=ts, uuid="GPU-4", hostname="n2", namespace="", pod="", util=0.0, mem_used_mib=0.0,
                         allocated=False, task_type="", tenant="", pool="inference"))
    return pd.DataFrame(rows)


def pending() -> pd.DataFrame:
    rows = []
    for i in range(0, 120, 10):
        ts = T0 + timedelta(seconds=STEP * i)
        rows.append(dict(timestamp=ts, namespace="team-a", pending_pods=3 if i < 60 else 0,
                         pending_gpus=12 if i < 60 else 0))
        rows.append(dict(timestamp=ts, namespace="team-b", pending_pods=1, pending_gpus=1))
    return pd.DataFrame(rows)


def by(rows, view):
    return {r.key: r for r in rows if r.view == view}


def test_team_view_separates_allocated_from_used_gpu_hours():
    rows = utilization_views(samples(), pending(), step_s=STEP)
    team = by(rows, "team")
    assert team["team-a"].allocated_gpu_hours == pytest.approx(2.0)
    assert team["team-a"].used_gpu_hours == pytest.approx(1.8)
    assert team["team-b"].allocated_gpu_hours == pytest.approx(2.0)
    assert team["team-b"].used_gpu_hours == pytest.approx(0.3)
    assert team["team-b"].idle_allocated_gpu_hours == pytest.approx(1.7)
    # an average alone would hide the idle hour: the percentiles show it
    assert team["team-b"].util_p50 == pytest.approx(15.0) and team["team-b"].util_p90 == pytest.approx(30.0)
    assert team["team-b"].util_mean == pytest.approx(15.0)


def test_task_type_pool_and_memory_views():
    rows = utilization_views(samples(), step_s=STEP)
    tt = by(rows, "task_type")
    assert set(tt) == {"training", "idle", "inference"} and tt["idle"].used_gpu_hours == 0
    pool = by(rows, "pool")
    assert pool["training"].gpus == 2 and pool["inference"].allocated_gpu_hours == pytest.approx(1.0)
    assert pool["inference"].used_ratio == pytest.approx(0.3)
    mem = by(rows, "gpu_memory")
    assert set(mem) == {"48-80 GiB", "0-8 GiB", "16-24 GiB"}
    assert mem["48-80 GiB"].mem_p95_mib == pytest.approx(60000.0)


def test_hour_view_and_queue_pressure_beside_it():
    rows = utilization_views(samples(), pending(), step_s=STEP)
    hour = by(rows, "hour")
    first, second = hour["2026-03-01T10:00:00Z"], hour["2026-03-01T11:00:00Z"]
    assert first.allocated_gpu_hours == pytest.approx(2.0) and second.allocated_gpu_hours == pytest.approx(2.0)
    assert (first.pending_gpus_max, second.pending_gpus_max) == (13.0, 1.0)
    team = by(rows, "team")
    assert team["team-a"].pending_pods_max == 3.0 and team["team-a"].pending_pods_mean == pytest.approx(1.5)
    assert by(rows, "all")["all"].gpus == 4


def test_views_take_the_step_from_a_collector_result_and_refuse_a_bare_frame_without_it():
    res = CollectorResult("gpu_samples", "test", Window(T0, T0 + timedelta(hours=2), STEP), samples())
    assert by(utilization_views(res), "team")["team-a"].allocated_gpu_hours == pytest.approx(2.0)
    with pytest.raises(ValueError, match="step_s"):
        utilization_views(samples())
    with pytest.raises(ValueError, match="missing column"):
        utilization_views(pd.DataFrame({"timestamp": [T0]}), step_s=STEP)
    assert utilization_views(pd.DataFrame(), step_s=STEP) == []


@pytest.mark.parametrize("mib,band", [(0, "0-8 GiB"), (8192, "8-16 GiB"), (46068, "24-48 GiB"),
                                      (81559, "48-80 GiB"), (90000, "80+ GiB"), (None, "unknown")])
def test_mem_band(mib, band):
    assert mem_band(mib) == band


def test_views_frame_and_table_rows():
    rows = utilization_views(samples(), step_s=STEP)
    assert list(views_frame(rows).columns)[:3] == ["view", "key", "gpus"]
    table = utilization_rows(samples(), STEP)
    train = [r for r in table if r.pod == "train"]
    assert len(train) == 2 and train[0].allocated_gpu_hours == pytest.approx(1.0)
    assert train[0].used_gpu_hours == pytest.approx(0.9) and train[0].pool == "training"
    assert not [r for r in table if r.gpu_uuid == "GPU-4"]


class FakePrometheus(PrometheusClient):
    """Answers range queries from canned series, keyed by a word of the expression."""

    def __init__(self, series: dict[str, list[dict]]):
        super().__init__("http://prometheus.invalid:9090")
        self.canned = series

    def query_range(self, expr, start, end, step):
        return self.canned["resource_requests" if "resource_requests" in expr else "phase"]


def test_queue_pressure_joins_pending_pods_and_gpus_per_namespace_and_step():
    t = T0.timestamp()
    prom = FakePrometheus({
        "phase": [{"metric": {"namespace": "team-a"}, "values": [[t, "3"], [t + 60, "1"]]}],
        "resource_requests": [{"metric": {"namespace": "team-a"}, "values": [[t, "12"]]}],
    })
    df = queue_pressure(prom, Window(T0, T0 + timedelta(minutes=2), 60))
    assert df[["namespace", "pending_pods", "pending_gpus"]].values.tolist() == [["team-a", 3.0, 12.0],
                                                                                 ["team-a", 1.0, 0.0]]
    assert str(df["timestamp"].dt.tz) == "UTC"
