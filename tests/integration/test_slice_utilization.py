"""Utilization per vGPU slice against real Prometheus scraping the simulated cluster's ``hami`` mode: each slice's
grant (HAMi's scheduler series) beside its use (the vGPU monitor's), and GPU-hours counted as the fraction of the
card the slice holds (``gpupoc.monitoring.slices``): a 12000-MiB, 40 % slice of an L40S counts 0.4 of a card, a
3000-MiB slice without a core limit its memory share, 3000/46068."""

from __future__ import annotations

import os
import subprocess
import sys
from datetime import datetime, timezone

import pytest

from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.monitoring import slices as S
from gpupoc.monitoring.promclient import PrometheusClient
from gpupoc.monitoring.results import Window
from gpupoc.sim.config import shipped_config

from .conftest import launch, wait_for

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not os.access("/usr/bin/prometheus", os.X_OK) or
                       not os.access("/usr/bin/prometheus-alertmanager", os.X_OK),
                       reason="Prometheus/Alertmanager not installed: run scripts/install-monitoring.sh"),
    pytest.mark.timeout(600),
    pytest.mark.xdist_group("slice-utilization"),
]
SCRAPE = 2.0
CARD_MIB = 46068
# pod -> (gpumem MiB, gpucores %, the utilization and memory its workload reports)
SLICES = {"slice-big": (12000, 40, 35, 9000), "slice-small": (3000, None, 20, 2500)}
SAMPLES = 5  # steps of every slice's series the assertions wait for


def _cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpupoc.cli", *args], capture_output=True, text=True, timeout=120)


@pytest.fixture(scope="module")
def hami(tmp_path_factory):
    sim = launch(tmp_path_factory.mktemp("hami-sim"), config=shipped_config(SchedulerMode("hami")))
    data_dir = tmp_path_factory.mktemp("monitoring")
    up = _cli("stack", "up", "--data-dir", str(data_dir), "--sim-url", sim.http_url,
              "--scrape-interval", f"{SCRAPE:g}s", "--evaluation-interval", f"{SCRAPE:g}s")
    try:
        assert up.returncode == 0, up.stdout + up.stderr
        import json

        yield sim, PrometheusClient(json.loads((data_dir / "stack.json").read_text())["prometheus"]["url"])
    finally:
        _cli("stack", "down", "--data-dir", str(data_dir))
        sim.stop()


def _pod(name: str, mem: int, cores: int | None, util: int, used: int) -> dict:
    limits = {"nvidia.com/gpu": "1", "nvidia.com/gpumem": str(mem)}
    if cores is not None:
        limits["nvidia.com/gpucores"] = str(cores)
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "team-serving"},
            "spec": {"restartPolicy": "Never", "nodeSelector": {"gpupoc.io/pool": "inference"},
                     "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                     "containers": [{"name": "main", "image": "gpupoc/virtual:1",
                                     "env": [{"name": "WORKLOAD_DURATION_SECONDS", "value": "300"},
                                             {"name": "WORKLOAD_GPU_UTIL", "value": str(util)},
                                             {"name": "WORKLOAD_GPU_MEM_MIB", "value": str(used)}],
                                     "resources": {"limits": limits}}]}}


def test_each_slice_counts_its_share_of_the_card_and_its_use_beside_its_grant(hami):
    from kubernetes import client

    sim, prom = hami
    api = client.CoreV1Api(sim.client("admin"))
    for name, spec in SLICES.items():
        api.create_namespaced_pod("team-serving", _pod(name, *spec))
    start = datetime.now(timezone.utc)

    def used_series() -> dict[str, int]:  # steps of each slice's use that Prometheus holds so far
        window = Window(start, datetime.now(timezone.utc), SCRAPE)
        res = prom.query_range(S.USED_MEM + '{exported_namespace="team-serving"}', window.start, window.end,
                               window.step) or prom.query_range(S.USED_MEM + '{namespace="team-serving"}',
                                                                window.start, window.end, window.step)
        seen = {(s["metric"].get("exported_pod") or s["metric"].get("pod")): sum(float(v) > 0 for _, v in s["values"])
                for s in res}
        return seen if all(seen.get(n, 0) >= SAMPLES for n in SLICES) else {}

    wait_for(f"{SAMPLES} samples of each slice's memory use", used_series, timeout=60, poll=SCRAPE)
    samples = S.collect_slice_samples(prom, Window(start, datetime.now(timezone.utc), SCRAPE))
    rows = S.slice_rows(samples[samples["mem_used_mib"].fillna(0) > 0], SCRAPE, "1h")
    by = rows.set_index("pod")
    assert set(SLICES) <= set(by.index), rows
    big, small = by.loc["slice-big"], by.loc["slice-small"]
    assert (big["mem_allocated_mib"], big["cores_allocated"], big["card_mib"]) == (12000, 40, CARD_MIB)
    assert big["share"] == 0.4 and small["share"] == round(3000 / CARD_MIB, 4)
    assert big["mem_used_mib_max"] == 9000 and small["mem_used_mib_max"] == 2500
    assert big["util_avg"] == pytest.approx(35, abs=1) and small["util_avg"] == pytest.approx(20, abs=1)
    for row in (big, small):  # a slice's GPU-hours: its share of the card over the steps it held it
        assert row["allocated_gpu_hours"] == pytest.approx(row["share"] * row["samples"] * SCRAPE / 3600, rel=1e-3)
        assert row["used_gpu_hours"] == pytest.approx(row["util_avg"] / 100 * row["samples"] * SCRAPE / 3600,
                                                      rel=0.05)
    assert small["used_gpu_hours"] > small["allocated_gpu_hours"]  # no core limit: it used more SMs than its share
