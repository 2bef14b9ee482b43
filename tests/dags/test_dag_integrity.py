"""Every DAG imports without errors, has the expected graph, parses in under a second and does no work."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DAGS = REPO / "dags"
DAG_IDS = ["poc_queue_congestion", "poc_tenant_isolation", "poc_utilization", "poc_fault_recovery",
           "poc_audit_trail"]
SHARED = {"validate_plan", "preflight", "check_access", "hold_cluster", "cluster_acquired", "prepare_wave", "wave",
          "bulk_shards", "bulk_shard", "release_gate", "wave_released", "observe",
          "prepare_services", "deploy_service", "services_ready", "service_traffic", "observe_services",
          "delete_service", "collect_evidence",
          "validate", "publish_evidence", "cleanup", "verdict"}


@pytest.fixture(scope="module")
def dagbag():
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(dag_folder=str(DAGS))


def test_every_dag_file_imports_without_errors(dagbag):
    assert dagbag.import_errors == {}, f"import errors: {dagbag.import_errors}"
    assert set(DAG_IDS) <= set(dagbag.dag_ids), f"missing: {sorted(set(DAG_IDS) - set(dagbag.dag_ids))}"


def test_tenant_isolation_runs_the_memory_isolation_probe_after_the_release_and_before_collection(dagbag):
    t = dagbag.dags["poc_tenant_isolation"].task_dict
    assert {"isolation_probes", "sample_quotas", "reclaim_probe", "memory_isolation_probe"} <= set(t) - SHARED
    assert "wave_released" in t["memory_isolation_probe"].upstream_task_ids
    assert "memory_isolation_probe" in t["collect_evidence"].upstream_task_ids


def test_tenant_isolation_runs_the_vgpu_slices_probe_beside_the_memory_isolation_probe(dagbag):
    t = dagbag.dags["poc_tenant_isolation"].task_dict
    assert "vgpu_slices_probe" in set(t) - SHARED
    assert "wave_released" in t["vgpu_slices_probe"].upstream_task_ids
    assert "vgpu_slices_probe" in t["collect_evidence"].upstream_task_ids
    assert "memory_isolation_probe" not in t["vgpu_slices_probe"].upstream_task_ids  # they run side by side


@pytest.mark.parametrize("dag_id", DAG_IDS)
def test_each_dag_has_the_shared_shape(dagbag, dag_id):
    dag = dagbag.dags[dag_id]
    ids = set(dag.task_ids)
    assert SHARED <= ids, f"{dag_id} lacks {sorted(SHARED - ids)}"
    t = dag.task_dict
    assert t["preflight"].upstream_task_ids == {"validate_plan"}
    assert t["check_access"].upstream_task_ids == {"validate_plan", "preflight"}, "prerequisites come first"
    assert t["hold_cluster"].upstream_task_ids == {"check_access"}
    assert t["cluster_acquired"].upstream_task_ids == {"validate_plan", "check_access"}
    assert t["prepare_wave"].upstream_task_ids == {"validate_plan", "cluster_acquired", "services_ready"}, \
        "the services are up before the wave is submitted"
    assert t["wave"].upstream_task_ids == {"prepare_wave"}
    assert t["bulk_shards"].upstream_task_ids == {"validate_plan"}, "cut from the plan, beside the checks"
    assert t["bulk_shard"].upstream_task_ids == {"validate_plan", "bulk_shards", "prepare_wave"}, \
        "submitted once the gangs exist and the services are up"
    assert t["release_gate"].upstream_task_ids == {"validate_plan", "cluster_acquired", "services_ready"}, \
        "the services are up before the wave arrives"
    assert t["wave_released"].upstream_task_ids == {"validate_plan", "cluster_acquired"}
    assert t["wave_released"].operator_name == "MarkerFileSensor", "waiting deferred holds no worker"
    assert t["observe"].upstream_task_ids == {"validate_plan", "cluster_acquired"}, "observing starts before release"
    probes = set(t) - SHARED - {"collect_evidence", "validate", "publish_evidence", "cleanup", "verdict"}
    assert all("wave_released" in t[p].upstream_task_ids for p in probes), probes
    assert {"wave", "bulk_shard", "release_gate", "observe", "delete_service"} <= t["collect_evidence"].upstream_task_ids
    assert t["collect_evidence"].trigger_rule == "all_done" and t["cleanup"].trigger_rule == "all_done"
    assert t["validate"].upstream_task_ids == {"validate_plan", "collect_evidence"}
    assert t["publish_evidence"].upstream_task_ids == {"collect_evidence", "validate"}
    assert t["cleanup"].upstream_task_ids >= {"collect_evidence"}
    assert not {"validate", "publish_evidence"} & t["cleanup"].upstream_task_ids, \
        "the pods are deleted and the lease ends beside validation, which reads only the evidence"
    assert t["verdict"].upstream_task_ids == {"cleanup", "validate"}
    assert dag.task_dict["verdict"].downstream_task_ids == set()


@pytest.mark.parametrize("dag_id", DAG_IDS)
def test_each_dag_is_documented_scheduled_from_the_plan_window_and_owned(dagbag, dag_id):
    from gpupoc.plan import load_plan_file
    from gpupoc.pipeline.common import default_plan_path

    dag = dagbag.dags[dag_id]
    w = load_plan_file(default_plan_path()).window
    assert dag.doc_md and dag.doc_md.lstrip().startswith("#")
    assert dag.catchup is False and dag.max_active_runs == 1
    assert dag.start_date == w.aware(w.start) and dag.end_date == w.aware(w.end)
    assert "gpupoc" in dag.tags
    assert dag.default_args["owner"] == "gpupoc" and dag.default_args["retries"] >= 1
    assert {"plan", "faults_note", "reviewers", "notes"} <= set(dag.params.keys())


@pytest.mark.parametrize("dag_id", DAG_IDS)
def test_the_wave_is_mapped_deferrable_pods_under_a_lease_on_the_one_slot_pool(dagbag, dag_id):
    dag = dagbag.dags[dag_id]
    wave = dag.task_dict["wave"]
    assert wave.operator_name == "GpuWorkloadOperator" or "GpuWorkloadOperator" in str(wave.operator_class)
    kw = wave.partial_kwargs
    assert kw.get("deferrable", True) is True
    assert dag.task_dict["hold_cluster"].pool == "gpupoc_cluster"
    assert dag.task_dict["cluster_acquired"].operator_name == "MarkerFileSensor"
    assert dag.task_dict["publish_evidence"].outlets, "the evidence Asset is published"


_NO_NETWORK = r"""
import json, sys
import socket, urllib.request
calls = []
def forbid(*a, **k):
    calls.append(repr(a)[:200]); raise RuntimeError("network at parse time")
socket.create_connection = forbid
urllib.request.urlopen = forbid
import runpy
dag_ids = [runpy.run_path(path)["dag"].dag_id for path in sys.argv[1:]]
print(json.dumps({"dag_ids": dag_ids, "calls": calls}))
"""


def test_dag_files_parse_without_network_calls():
    """Parsing reads the plan file only: no cluster, Prometheus or GX call (the parse time is a figure that
    bench/dag_parse.py prints, not a test)."""
    files = sorted(str(p) for p in DAGS.glob("poc_*.py"))
    env = {**os.environ, "KUBECONFIG": "/nonexistent/kubeconfig"}
    res = subprocess.run([sys.executable, "-c", _NO_NETWORK, *files], capture_output=True, text=True, timeout=180,
                         env=env)
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["calls"] == [], f"a DAG file touched the network at parse time: {out['calls']}"
    assert len(out["dag_ids"]) == len(files) == 6, out


def test_an_invalid_plan_still_imports_and_names_the_problem(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("name: broken\n")
    code = ("import runpy,json,sys; g=runpy.run_path(sys.argv[1]); d=g['dag'];"
            "print(json.dumps({'schedule': str(d.schedule), 'doc': d.doc_md}))")
    res = subprocess.run([sys.executable, "-c", code, str(DAGS / "poc_queue_congestion.py")], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "GPUPOC_PLAN": str(bad)})
    assert res.returncode == 0, res.stderr[-2000:]
    out = json.loads(res.stdout.strip().splitlines()[-1])
    assert out["schedule"] == "None"
    assert "Plan problem at parse time" in out["doc"] and "bad.yaml" in out["doc"]


@pytest.mark.parametrize("dag_id", [d for d in DAG_IDS if d != "poc_report"])
def test_every_task_reads_the_plan_with_the_runs_platform(dagbag, dag_id):
    import jinja2

    dag = dagbag.dags[dag_id]
    assert "platform" in dag.params
    for task_id in ("hold_cluster", "cluster_acquired", "wave", "wave_released"):
        task = dag.task_dict[task_id]
        template = task.plan_path if hasattr(task, "plan_path") else task.partial_kwargs["plan_path"]
        render = jinja2.Template(template).render
        assert render(params={"plan": "plans/default.yaml", "platform": "kai"}) == "plans/default.yaml#kai"
        assert render(params={"plan": "plans/default.yaml", "platform": ""}) == "plans/default.yaml"


@pytest.mark.parametrize("dag_id", DAG_IDS)
def test_services_are_deployed_and_deleted_by_the_provider_s_operators_around_the_wave(dagbag, dag_id):
    t = dagbag.dags[dag_id].task_dict
    deploy, delete, load = t["deploy_service"], t["delete_service"], t["service_traffic"]
    assert "KubernetesCreateResourceOperator" in [c.__name__ for c in deploy.operator_class.__mro__]
    assert "KubernetesDeleteResourceOperator" in [c.__name__ for c in delete.operator_class.__mro__]
    assert "KubernetesPodOperator" in [c.__name__ for c in load.operator_class.__mro__]
    assert t["prepare_services"].upstream_task_ids == {"validate_plan"}, "manifests from the plan, beside the checks"
    assert deploy.upstream_task_ids == {"prepare_services", "cluster_acquired"}, "deployed under the lease"
    assert delete.upstream_task_ids >= {"prepare_services"}
    assert t["services_ready"].upstream_task_ids >= {"deploy_service"} and load.upstream_task_ids == {"services_ready"}
    assert t["services_ready"].trigger_rule == "all_done", "a class without services (or a failed create) still " \
                                                           "releases its wave"
    assert {"observe_services", "service_traffic"} <= delete.upstream_task_ids and delete.trigger_rule == "all_done"
    assert "delete_service" in t["collect_evidence"].upstream_task_ids, "the audit class judges the delete"


def test_the_lease_sensor_looks_inline_first_and_the_release_sensor_defers_at_once(dagbag):
    t = dagbag.dags["poc_queue_congestion"].task_dict
    assert 0 < t["cluster_acquired"].inline_seconds <= 5, "a short look: a held lease is still waited deferred"
    assert t["wave_released"].inline_seconds == 0
