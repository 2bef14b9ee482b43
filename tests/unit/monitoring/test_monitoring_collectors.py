"""monitoring/collectors: GPU samples tagged from both label spellings, aggregates and GPU-hours."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from gpupoc.exceptions import SourceUnavailable
from gpupoc.monitoring import collectors
from gpupoc.monitoring.promclient import PrometheusClient
from gpupoc.monitoring.results import Window

T0 = 1_800_000_000.0
STEP = 15.0
WINDOW = Window(datetime.fromtimestamp(T0, timezone.utc), datetime.fromtimestamp(T0 + 3 * STEP, timezone.utc), STEP)


def _values(v, n=4):
    return [[T0 + i * STEP, str(v)] for i in range(n)]


UTIL = [
    # native dcgm-exporter labels: team-vision's 2-GPU training pod
    {"metric": {"gpu": "0", "UUID": "GPU-a", "Hostname": "training-node-1", "modelName": "NVIDIA H100 80GB HBM3",
                "container": "main", "namespace": "team-vision", "pod": "train-0"}, "values": _values(80)},
    {"metric": {"gpu": "1", "UUID": "GPU-b", "Hostname": "training-node-1", "modelName": "NVIDIA H100 80GB HBM3",
                "container": "main", "namespace": "team-vision", "pod": "train-0"}, "values": _values(80)},
    # behind a ServiceMonitor (exported_*) with the newer lowercase hostname: team-nlp on an L40S
    {"metric": {"gpu": "0", "UUID": "GPU-c", "hostname": "inference-node-1", "modelName": "NVIDIA L40S",
                "namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-abc", "exported_namespace": "team-nlp",
                "exported_pod": "nlp-0", "exported_container": "main"}, "values": _values(20)},
    # a free GPU behind the same ServiceMonitor: its `pod` is the exporter's own
    {"metric": {"gpu": "1", "UUID": "GPU-e", "hostname": "inference-node-1", "modelName": "NVIDIA L40S",
                "namespace": "gpu-operator", "pod": "nvidia-dcgm-exporter-abc", "container": "nvidia-dcgm-exporter"},
     "values": _values(0)},
    # a free GPU, only 2 of 4 samples (half the window)
    {"metric": {"gpu": "2", "UUID": "GPU-d", "Hostname": "training-node-1", "modelName": "NVIDIA H100 80GB HBM3"},
     "values": _values(0, 2)},
]
MEM = [{"metric": dict(s["metric"]), "values": _values(1000 * (i + 1), len(s["values"]))} for i, s in enumerate(UTIL)]
POD_LABELS = [
    {"__name__": "kube_pod_labels", "namespace": "team-vision", "pod": "train-0",
     "label_gpupoc_io_task_type": "training", "label_gpupoc_io_tenant": "team-vision"},
    {"__name__": "kube_pod_labels", "namespace": "team-nlp", "pod": "nlp-0", "label_gpupoc_io_task_type": "inference"},
]
NODE_LABELS = [{"__name__": "kube_node_labels", "node": "training-node-1", "label_gpupoc_io_pool": "training"},
               {"__name__": "kube_node_labels", "node": "inference-node-1", "label_nvidia_com_gpu_product": "NVIDIA-L40S"}]


class FakeProm(PrometheusClient):
    def __init__(self, util=UTIL, mem=MEM, pod_labels=POD_LABELS, node_labels=NODE_LABELS, fail=False):
        super().__init__("http://prom.test:9090")
        self.data = {"DCGM_FI_DEV_GPU_UTIL": util, "DCGM_FI_DEV_FB_USED": mem,
                     "kube_pod_labels": pod_labels, "kube_node_labels": node_labels}
        self.fail = fail

    def query_range(self, expr, start, end, step):
        if self.fail:
            raise SourceUnavailable(f"{self.url}/api/v1/query_range", "unreachable: connection refused", "start it")
        return self.data[expr]

    def series(self, match, start, end):
        return self.data[match]


def test_samples_take_exported_labels_over_the_exporter_pods_own():
    res = collectors.collect_gpu_samples(FakeProm(), WINDOW)
    assert res.verified, res.reason
    df = res.frame
    nlp = df[df["uuid"] == "GPU-c"].iloc[0]
    assert (nlp["namespace"], nlp["pod"], nlp["hostname"]) == ("team-nlp", "nlp-0", "inference-node-1")
    assert nlp["task_type"] == "inference" and nlp["tenant"] == "unknown"
    free = df[df["uuid"].isin(["GPU-d", "GPU-e"])]
    assert not free["allocated"].any() and set(free["task_type"]) == {""} and set(free["namespace"]) == {""}
    assert df["mem_used_mib"].notna().all()
    assert str(df["timestamp"].dt.tz) == "UTC"


def test_pool_from_node_labels_mapping_or_model_name():
    res = collectors.collect_gpu_samples(FakeProm(), WINDOW)
    assert set(res.frame.loc[res.frame["hostname"] == "training-node-1", "pool"]) == {"training"}
    assert set(res.frame.loc[res.frame["hostname"] == "inference-node-1", "pool"]) == {"NVIDIA-L40S"}
    mapped = collectors.collect_gpu_samples(FakeProm(), WINDOW, pool_map={"NVIDIA L40S": "serving"})
    assert set(mapped.frame.loc[mapped.frame["hostname"] == "inference-node-1", "pool"]) == {"serving"}
    bare = collectors.collect_gpu_samples(FakeProm(node_labels=[]), WINDOW)
    assert set(bare.frame["pool"]) == {"NVIDIA H100 80GB HBM3", "NVIDIA L40S"}


def test_utilization_by_namespace_counts_allocated_gpus_only():
    res = collectors.utilization_by_namespace(FakeProm(), WINDOW)
    assert res.verified
    rows = res.frame.set_index("namespace")
    assert list(rows.index) == ["team-nlp", "team-vision"]
    assert rows.loc["team-vision", "util_mean_allocated"] == 80
    assert rows.loc["team-vision", "gpus"] == 2
    assert rows.loc["team-nlp", "util_mean_allocated"] == 20


def test_allocated_versus_used_gpu_hours():
    res = collectors.gpu_hours_by_namespace(FakeProm(), WINDOW)
    rows = res.frame.set_index("namespace")
    # team-vision: 2 GPUs x 4 samples x 15 s = 120 GPU-seconds allocated, 80 % of it used
    assert rows.loc["team-vision", "allocated_gpu_hours"] == pytest.approx(120 / 3600)
    assert rows.loc["team-vision", "used_gpu_hours"] == pytest.approx(0.8 * 120 / 3600)
    assert rows.loc["team-nlp", "used_ratio"] == pytest.approx(0.2)
    assert rows.loc["team-nlp", "idle_allocated_gpu_hours"] == pytest.approx(0.8 * 60 / 3600)


def test_pool_view_includes_free_gpus():
    rows = collectors.utilization_by_pool(FakeProm(), WINDOW).frame.set_index("pool")
    training = rows.loc["training"]
    assert training["gpus"] == 3 and training["samples"] == 10 and training["allocated_samples"] == 8
    assert training["util_mean_all"] == pytest.approx(80 * 8 / 10)
    assert training["util_mean_allocated"] == 80


def test_task_type_and_time_bucket_views():
    samples = collectors.collect_gpu_samples(FakeProm(), WINDOW)
    by_type = collectors.utilization_by(samples, ["task_type"]).frame.set_index("task_type")
    assert by_type.loc["training", "util_mean_allocated"] == 80
    buckets = collectors.utilization_by_bucket(samples, freq="30s", by=["namespace"])
    assert buckets.verified and {"bucket", "namespace"} <= set(buckets.frame.columns)
    assert buckets.frame.groupby("namespace")["samples"].sum().to_dict() == {"team-nlp": 4, "team-vision": 8}


def test_task_type_without_pod_labels_is_not_verified():
    res = collectors.utilization_by_task_type(FakeProm(pod_labels=[]), WINDOW)
    assert not res.verified
    assert "label_gpupoc_io_task_type" in res.reason


def test_unreachable_prometheus_gives_not_verified_with_url_and_fix():
    res = collectors.utilization_by_namespace(FakeProm(fail=True), WINDOW)
    assert not res.verified and res.frame.empty
    assert res.source == "http://prom.test:9090/api/v1/query_range"
    assert "connection refused" in res.reason and "fix:" in res.reason


def test_no_samples_in_window_is_not_verified_not_an_empty_pass():
    res = collectors.collect_gpu_samples(FakeProm(util=[], mem=[]), WINDOW)
    assert not res.verified
    assert "no DCGM_FI_DEV_GPU_UTIL samples" in res.reason and res.source == "http://prom.test:9090"
    derived = collectors.utilization_by(res, ["namespace"])
    assert not derived.verified and derived.reason == res.reason


def test_only_free_gpus_gives_not_verified_namespace_view():
    res = collectors.utilization_by_namespace(FakeProm(util=UTIL[3:], mem=MEM[3:]), WINDOW)
    assert not res.verified and "no allocated GPU samples" in res.reason


def test_unknown_grouping_column_is_named():
    samples = collectors.collect_gpu_samples(FakeProm(), WINDOW)
    with pytest.raises(ValueError, match=r"\['team'\]"):
        collectors.utilization_by(samples, ["team"])


def test_window_rejects_naive_and_reversed_times():
    with pytest.raises(ValueError, match="timezone-aware"):
        Window(datetime(2026, 1, 1), datetime(2026, 1, 2))
    with pytest.raises(ValueError, match="not after start"):
        Window(WINDOW.end, WINDOW.start)


def test_collector_frame_feeds_the_utilization_aggregator():
    """The collector's own frame (from a synthetic Prometheus answer) goes through the adapter into
    aggregate_utilization_samples: breaks if either side renames a column."""
    from gpupoc.evidence.writer import to_arrow
    from gpupoc.classes.utilization.samples import aggregate_utilization_samples, samples_from_collector

    res = collectors.collect_gpu_samples(FakeProm(), WINDOW)
    assert res.verified, res.reason
    samples = samples_from_collector(res.frame, res.window.step)
    assert {"ts", "gpu_uuid", "node", "mem_mib", "step_seconds", "util"} <= set(samples.columns)
    assert set(samples["gpu_uuid"]) == {"GPU-a", "GPU-b", "GPU-c"}  # free GPUs are not allocated GPU-hours
    agg = aggregate_utilization_samples(samples, bucket="1h")
    by_gpu = agg.set_index("gpu_uuid")
    assert len(agg) == 3
    assert by_gpu.loc["GPU-a", "node"] == "training-node-1" and by_gpu.loc["GPU-c", "namespace"] == "team-nlp"
    assert by_gpu.loc["GPU-a", "util_avg"] == pytest.approx(80.0)
    assert by_gpu.loc["GPU-a", "mem_mib_avg"] == pytest.approx(1000.0)
    assert by_gpu.loc["GPU-a", "allocated_gpu_hours"] == pytest.approx(4 * STEP / 3600)
    assert by_gpu.loc["GPU-a", "used_gpu_hours"] == pytest.approx(0.8 * 4 * STEP / 3600)
    assert to_arrow("utilization", agg.to_dict("records")).num_rows == 3  # the evidence table accepts it


def test_adapter_names_missing_columns():
    import pandas as pd

    from gpupoc.classes.utilization.samples import samples_from_collector

    with pytest.raises(KeyError, match="uuid"):
        samples_from_collector(pd.DataFrame({"timestamp": [], "util": []}), 15.0)
