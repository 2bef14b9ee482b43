"""The same 200-pod congestion wave gives the same item verdicts whether it is submitted one pod per task (the
operator's path, stood in for by ``class_runner``) or in bulk shards (``steps.bulk``, as the DAG's ``bulk_shard``
tasks run it): the class's checks do not know which path submitted. Virtual workloads of a few seconds on a
simulated cluster of 8 nodes x 8 GPUs, asked for about four times its GPUs."""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
import yaml

from gpupoc.sim.config import DEFAULT_CONFIG

from .class_runner import run_class
from .test_verdict_stability import congestion_plan, same_items

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]

NODES, GPUS_PER_NODE = 8, 8
WAVE = [
    {"workload": "v-train-8g", "tenant": "team-vision", "count": 4},
    {"workload": "v-train-4g", "tenant": "team-nlp", "count": 6},
    {"workload": "v-train-2g", "tenant": "team-vision", "count": 10},
    {"workload": "v-train-2g", "tenant": "team-nlp", "count": 10},
    {"workload": "v-sweep-1g", "tenant": "team-vision", "count": 85},
    {"workload": "v-sweep-1g", "tenant": "team-nlp", "count": 85},
]
DURATIONS = {"v-train-8g": 4, "v-train-4g": 3, "v-train-2g": 3, "v-sweep-1g": 2}


def cluster_config(path: Path) -> Path:
    """The default simulated cluster with a larger training pool, quotas and queue to hold the wave."""
    cfg = yaml.safe_load(DEFAULT_CONFIG.read_text())
    total = NODES * GPUS_PER_NODE
    for pool in cfg["pools"]:
        if pool["name"] == "training":
            pool["nodes"], pool["gpus_per_node"] = NODES, GPUS_PER_NODE
    for t in cfg["tenants"]:
        t["quota"] = {"gpus": 4 * total, "pods": 1000}
    for cq in cfg["kueue"]["cluster_queues"]:
        if cq["name"] == "training-cq":
            cq["nominal_gpus"] = total
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def wave_plan(tmp: Path, sim, submission: str) -> Path:
    path = congestion_plan(tmp, sim, submission)
    plan = yaml.safe_load(path.read_text())
    for w in plan["workloads"]:
        if w["name"] in DURATIONS:
            w["duration_seconds"] = DURATIONS[w["name"]]
    for pool in plan["pools"]:
        if pool["name"] == "training":
            pool.update(nodes=NODES, gpus_per_node=GPUS_PER_NODE,
                        node_names=[f"training-node-{i}" for i in range(1, NODES + 1)])
    for t in plan["tenants"]:
        t["quota"] = {"gpus": 4 * NODES * GPUS_PER_NODE, "pods": 1000}
    qc = plan["test_classes"]["queue_congestion"]
    qc.update(wave=WAVE, gate_timeout_seconds=120)
    qc["thresholds"]["max_wait_seconds"] = 300
    qc["submission"] = {"mode": submission, "shard_size": 50, "qps": 100, "burst": 50}
    # the online service is judged by its own tests (test_service_classes): its latency under two simulated
    # clusters' 200-pod waves on one loaded machine says nothing about how the wave was submitted
    qc.pop("services", None)
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    from .conftest import launch

    sims, futures = {}, {}
    try:
        with ProcessPoolExecutor(max_workers=2, mp_context=multiprocessing.get_context("fork")) as pool:
            for mode in ("operator", "bulk"):
                tmp = tmp_path_factory.mktemp(f"wave-{mode}")
                sims[mode] = sim = launch(tmp / "sim", config=cluster_config(tmp / "cluster.yaml"))
                futures[mode] = pool.submit(run_class, wave_plan(tmp, sim, mode), "queue_congestion",
                                            f"wave200__{mode}")
            return {mode: f.result() for mode, f in futures.items()}
    finally:
        for sim in sims.values():
            sim.stop()


def test_operator_and_bulk_give_the_same_item_verdicts_on_a_200_pod_wave(runs):
    op, bulk = runs["operator"], runs["bulk"]
    assert not op.errors and not bulk.errors, (op.errors, bulk.errors)
    assert op.summary["expected"] == bulk.summary["expected"] == 200
    assert op.summary["submission"] == "operator" and bulk.summary["submission"] == "bulk"
    assert "lost" not in bulk.summary["outcomes"], bulk.summary
    assert bulk.summary["needing_explanation"] >= 50, f"the wave made workloads wait: {bulk.summary}"
    mine, theirs = same_items(bulk, op)
    assert mine == theirs, (bulk.verdicts, op.verdicts)


def test_either_waves_start_up_latency_comes_from_watches(runs):
    bulk, op = runs["bulk"], runs["operator"]
    # the bulk shards' watches, and for the operator's wave the observer's (pipeline/watch_record.py)
    assert bulk.summary["startup_source"] == "watch" and op.summary["startup_source"] == "watch"
    assert op.file("pod_transitions-observer"), "the observer kept no pod transitions"
    shards = [bulk.file(f"bulk_shard-{i}") for i in range(5)]  # 99 + 101 items of two tenants, 50 a shard
    assert all(s and s["watches"] >= 1 and s["items"] <= 50 for s in shards), shards
    assert sum(s["items"] for s in shards) == 200 and len({s["namespace"] for s in shards}) == 2
    assert bulk.summary["ready_p50_ms"] is not None and bulk.summary["scheduling_pods_per_second"] > 0
    assert bulk.summary["ready_p50_ms"] <= bulk.summary["ready_p95_ms"] <= bulk.summary["ready_p99_ms"]
