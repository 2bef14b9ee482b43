"""vGPU slices from HAMi's series: granted against used per slice, and GPU-hours as the fraction of the card a
slice holds (the larger of its memory share and its core share)."""

from __future__ import annotations

from datetime import datetime, timezone

import pandas as pd

from gpupoc.monitoring import slices as S
from gpupoc.monitoring.promclient import PrometheusClient
from gpupoc.monitoring.results import Window

MIB = 1024 * 1024
CARD = "GPU-aaaa"
WINDOW = Window(datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc), datetime(2026, 12, 1, 10, 1, tzinfo=timezone.utc),
                15.0)
T = [1795082400 + 15 * i for i in range(4)]


def series(labels: dict, values: list[float], times=T) -> dict:
    return {"metric": labels, "values": [[t, str(v)] for t, v in zip(times, values)]}


def sched(pod: str, **extra) -> dict:
    return {"exported_namespace": "team-serving", "namespace": "hami-system", "node": "inference-node-1",
            "exported_pod": pod, "pod": "hami-scheduler-0", "container_index": "0", "device_uuid": CARD, **extra}


def monitor(pod: str) -> dict:
    return {"exported_namespace": "team-serving", "exported_pod": pod, "container": "base", "vdevice_index": "0",
            "device_uuid": CARD}


class FakeProm(PrometheusClient):
    def __init__(self, data):
        super().__init__("http://prom.test:9090")
        self.data = data

    def query_range(self, expr, start, end, step):
        return self.data.get(expr, [])


def data(leaked_after: int = 4) -> dict:
    """A 3000-MiB slice without cores (pod a) and a 12000-MiB, 40 % one (pod b) on one 46068-MiB card; pod a runs
    for ``leaked_after`` steps and its grant is still served after."""
    return {
        S.ALLOC_MEM: [series(sched("a"), [3000 * MIB] * 4), series(sched("b"), [12000 * MIB] * 4)],
        S.ALLOC_CORES: [series(sched("a"), [0] * 4), series(sched("b"), [40] * 4)],
        S.USED_MEM: [series(monitor("a"), [2500 * MIB] * leaked_after, T[:leaked_after]),
                     series(monitor("b"), [9000 * MIB] * 4)],
        S.UTIL: [series(monitor("a"), [20] * leaked_after, T[:leaked_after]), series(monitor("b"), [35] * 4)],
        S.CARD_MEM: [series({"node": "inference-node-1", "device_uuid": CARD, "device_index": "0"}, [46068 * MIB] * 4)],
    }


def test_samples_join_the_schedulers_grants_with_what_the_monitor_saw_and_the_cards_memory():
    df = S.collect_slice_samples(FakeProm(data()), WINDOW)
    assert list(df.columns) == S.SAMPLE_COLUMNS and len(df) == 8
    b = df[df["pod"] == "b"].iloc[0]
    assert (b["namespace"], b["node"], b["container_index"]) == ("team-serving", "inference-node-1", "0")
    assert (b["mem_allocated_mib"], b["cores_allocated"], b["mem_used_mib"], b["util"], b["card_mib"]) == (
        12000, 40, 9000, 35, 46068)
    assert S.collect_slice_samples(FakeProm({}), WINDOW).empty  # no HAMi: no slices


def test_a_slice_counts_the_larger_of_its_memory_and_core_share_of_the_card():
    share = S.share_of(pd.Series([3000.0, 12000.0, 46068.0, 3000.0]), pd.Series([46068.0, 46068.0, 46068.0, None]),
                       pd.Series([0.0, 40.0, 0.0, 0.0]))
    assert [round(x, 4) if x == x else None for x in share] == [0.0651, 0.4, 1.0, None]


def test_rows_count_gpu_hours_as_fractions_and_a_kept_slice_as_allocated_and_unused():
    rows = S.slice_rows(S.collect_slice_samples(FakeProm(data(leaked_after=2)), WINDOW), 15.0, "60s")
    a, b = (rows[rows["pod"] == p].iloc[0] for p in ("a", "b"))
    assert b["share"] == 0.4 and b["allocated_gpu_hours"] == round(4 * 0.4 * 15 / 3600, 6)
    assert b["used_gpu_hours"] == round(4 * 0.35 * 15 / 3600, 6) and b["mem_used_mib_max"] == 9000
    assert a["share"] == round(3000 / 46068, 4) and a["samples"] == 4
    assert a["used_gpu_hours"] == round(2 * 0.2 * 15 / 3600, 6)  # two of its four steps it was gone, still granted
    assert a["allocated_gpu_hours"] > 0 and a["mem_allocated_mib"] == 3000
