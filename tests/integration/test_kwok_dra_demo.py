"""The DRA candidate end to end: `gpupoc demo --cluster kwok --platform kube-dra` starts the real control plane
with the KWOK nodes' GPUs as DRA devices (ResourceSlices of gpu.gpupoc.io, no nvidia.com/gpu capacity); the
preflight counts the pools' whole cards from the slices and passes; the congestion class runs through a real
Airflow, kube-scheduler v1.37.2 allocating every wave pod's ``nvidia.com/gpu`` from DRA devices; the report
judges its must and key items; and the run's evidence records that the GPUs were DRA-allocated.

One class only (the machine is shared): the congestion wave is the one that asks more GPUs than the pools have.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from gpupoc.controlplane.binaries import pinned_kubernetes_version
from gpupoc.controlplane.dra_slices import DRIVER
from tests.integration.kwok_demos import kwok_demo

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("kwok-demo")]
CLASSES = ("poc_queue_congestion",)


@pytest.fixture(scope="module")
def demo():
    """The demo on the plan's kube-dra platform in a private tree, stopped (control plane included) at the end."""
    with kwok_demo("gpupoc-kwok-dra-demo-", CLASSES, platform="kube-dra") as running:
        yield running


def _platform_info(root: Path) -> dict[str, tuple[str, str]]:
    """key -> (value, source) of the congestion run's platform_info table."""
    tables = sorted(root.glob("var/**/poc_queue_congestion/*/tables/platform_info.parquet"))
    assert len(tables) == 1, f"one congestion run's platform_info under {root}/var: {tables}"
    table = tables[0]
    return {r["key"]: (r["value"], r["source"]) for r in pq.read_table(table).to_pylist()}


@pytest.mark.timeout(2400)
def test_the_dra_control_plane_starts_and_the_preflight_counts_its_devices(demo):
    result, lines, _ = demo
    text = "\n".join(lines)
    assert f"Kubernetes {pinned_kubernetes_version()}" in text and "GPUs as DRA devices" in text, text[-2000:]
    preflight = next(line for line in lines if "gpupoc preflight:" in line)
    passed, _, total = preflight.split("gpupoc preflight: ", 1)[1].split(" passed")[0].partition(" of ")
    assert passed == total, preflight
    assert result.runs == {dag: "success" for dag in CLASSES}, result.runs


def test_the_run_records_that_the_gpus_were_dra_devices_of_the_real_scheduler(demo):
    _, _, root = demo
    info = _platform_info(root)
    assert info["gpus.allocation"] == ("dra", "/apis/resource.k8s.io/v1/resourceslices"), info
    assert info["gpus.dra.drivers"][0] == DRIVER
    assert info["gpus.dra.whole_cards"][0] == "32", "3 x 8 H100 and 2 x 4 L40S whole cards"
    assert info["kubernetes.gitVersion"][0] == pinned_kubernetes_version()
    assert info["adapter"][0] == "kube-scheduler" and int(info["nodes.kwok"][0]) == 5


def test_every_must_and_key_check_of_the_congestion_class_is_judged_a_pass_on_dra(demo):
    result, _, _ = demo
    report = json.loads((result.outcome.report_dir / "report.json").read_text())
    checks = [c for i in report["items"] for c in i["checks"]
              if c["tier"] in ("must", "key") and c.get("test_class") == "queue_congestion"]
    assert checks, "the congestion class judged must or key checks"
    unsettled = [f"{c['check_id']}: {c['verdict']}: {c['reason']}" for c in checks
                 if c["verdict"] not in ("pass", "not_applicable")]
    assert unsettled == [], unsettled
