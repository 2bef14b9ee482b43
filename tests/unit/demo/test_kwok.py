"""``gpupoc demo --cluster kwok``: the plan's node failures that the simulated cluster's ``sim`` injector would
provoke use KWOK's taint instead, every change is said, and what only the simulated cluster can do is refused."""

from pathlib import Path

import pytest
import yaml

from gpupoc.demo.kwok import check_kwok_options, kwok_injectors
from gpupoc.demo.pids import PidFile
from gpupoc.demo.services import DemoPaths, write_demo_plan
from gpupoc.exceptions import GpupocError
from gpupoc.plan import load_plan

PLAN = Path(__file__).resolve().parents[3] / "plans" / "default.yaml"


def _fault_recovery(injections, service_failures=()):
    return {"test_classes": {"fault_recovery": {"injections": list(injections),
                                                "service_failures": list(service_failures)}}}


def test_node_failures_left_to_sim_or_naming_it_are_failed_by_taint_and_said():
    data = _fault_recovery([{"kind": "node_failure"}, {"kind": "node_failure", "injector": "sim"},
                            {"kind": "node_failure", "injector": {"method": "sim"}}, {"kind": "oom"}],
                           [{"service": "svc", "injector": {"method": "sim"}}, {"service": "svc2"}])
    changes = kwok_injectors(data)
    spec = data["test_classes"]["fault_recovery"]
    assert [i.get("injector") for i in spec["injections"]] == [{"method": "taint"}] * 3 + [None]
    assert spec["service_failures"][0]["injector"] == {"method": "taint"}
    assert "injector" not in spec["service_failures"][1], "it follows the class's node failure injector"
    assert len(changes) == 4 and all("injector" in c for c in changes)


def test_a_plans_own_real_injector_is_kept():
    drain = {"method": "drain", "timeout_seconds": 60}
    data = _fault_recovery([{"kind": "node_failure", "injector": drain}])
    assert kwok_injectors(data) == [] and data["test_classes"]["fault_recovery"]["injections"][0]["injector"] == drain


@pytest.mark.parametrize("faults, behaviours, from_manifests, named", [
    ("cross-tenant-logs", "", False, "cross-tenant-logs"), ("", "throttled", False, "throttled"),
    ("", "", True, "--cluster-from-manifests")])
def test_what_only_the_simulated_cluster_does_is_refused_naming_it(faults, behaviours, from_manifests, named):
    with pytest.raises(GpupocError, match=named):
        check_kwok_options(faults, behaviours, from_manifests)


def test_the_demo_plan_for_kwok_nodes_names_its_changes_and_validates(tmp_path):
    paths = DemoPaths(tmp_path, tmp_path / "var")
    kubeconfig = tmp_path / "var" / "demo" / "control-plane" / "kubeconfig-plan"
    cluster = {"url": "https://127.0.0.1:6443", "kubeconfig": str(tmp_path / "admin.kubeconfig"),
               "audit_log": str(tmp_path / "audit.log")}
    said = []
    plan = write_demo_plan(paths, PLAN, cluster, None, kubeconfig=kubeconfig, cluster="kwok", out=said.append)
    text = plan.read_text()
    assert "the real control plane (KWOK nodes)" in text and "# changed for this cluster:" in text
    data = yaml.safe_load(text)
    node_failures = [i for i in data["test_classes"]["fault_recovery"]["injections"] if i["kind"] == "node_failure"]
    assert node_failures and all(i["injector"] == {"method": "taint"} for i in node_failures)
    assert data["platform"]["kubeconfig"] == str(kubeconfig)
    assert data["evidence_sources"]["audit_log_path"] == cluster["audit_log"]
    assert data["platform"]["name"] == "gpupoc-kwok", "the default plan's simulated-cluster name is not kept"
    assert said and all("plan for KWOK nodes" in line for line in said)
    load_plan(plan, kubeconfig_later=True)  # a plan naming a real cluster accepts the taint injector


def test_down_without_a_control_plane_stops_nothing(tmp_path):
    from gpupoc.demo.kwok import stop_kwok_cluster

    assert stop_kwok_cluster(PidFile.load(tmp_path / "pids.json")) == {}


@pytest.mark.parametrize("mode", ["volcano", "kai", "hami"])
def test_a_scheduler_not_served_for_real_here_is_refused_naming_the_real_ones(mode):
    from gpupoc.demo.kwok import check_kwok_mode

    with pytest.raises(GpupocError, match=f"scheduler mode {mode}.*kube-scheduler and Kueue"):
        check_kwok_mode(mode)


@pytest.mark.parametrize("mode", ["kube", "kueue"])
def test_kube_scheduler_and_kueue_run_for_real(mode):
    from gpupoc.demo.kwok import check_kwok_mode

    check_kwok_mode(mode)


def test_dra_gpus_on_the_simulated_cluster_are_refused_naming_the_switch():
    from gpupoc.demo.kwok import check_sim_gpus
    from gpupoc.demo.services import gpus_for

    assert gpus_for(PLAN) == "device-plugin" and gpus_for(PLAN, "kube-dra") == "dra"
    check_sim_gpus(gpus_for(PLAN))
    with pytest.raises(GpupocError, match=r"platform.options.gpus: dra.*--cluster kwok"):
        check_sim_gpus(gpus_for(PLAN, "kube-dra"))


def test_a_kueue_platform_without_cluster_queues_of_its_own_is_refused_on_the_real_control_plane():
    from gpupoc.demo.kwok import check_kwok_queues
    from gpupoc.exceptions import ConfigError
    from gpupoc.pipeline.common import repo_root

    plans = repo_root() / "plans"
    with pytest.raises(ConfigError) as refused:
        check_kwok_queues("kueue", plans / "default.yaml", "kueue")
    assert refused.value.errors[0].startswith("cluster.queues.kueue.cluster_queues:")
    check_kwok_queues("kueue", plans / "kueue.yaml")  # its own ClusterQueues: started as it is
    check_kwok_queues("kueue", plans / "compare.yaml", "kueue")  # make compare CLUSTER=kwok's Kueue candidate
    check_kwok_queues("kube", plans / "default.yaml", "kube")  # no Kueue: nothing asked
