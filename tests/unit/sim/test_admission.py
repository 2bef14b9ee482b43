"""Pod admission: validation, defaulting, PriorityClass resolution, ResourceQuota, scheduling gates."""

import pytest
from gpupoc.sim.admission import admit_pod, qos_class
from gpupoc.sim.api.status import StatusError
from gpupoc.sim.bootstrap import bootstrap
from gpupoc.sim.cluster import ClusterState, make_identities
from gpupoc.sim.config import load_cluster_config
from gpupoc.sim.faults import Fault


def make_state(tmp_path, faults=frozenset()):
    state = ClusterState(config=load_cluster_config(), data_dir=tmp_path, faults=faults)
    state.identities = make_identities(state.config)
    bootstrap(state)
    return state


def gpu_pod(name, gpus=1, **spec):
    return {"metadata": {"name": name},
            "spec": {"containers": [{"name": "base", "image": "gpupoc/virtual:1",
                                     "resources": {"limits": {"nvidia.com/gpu": str(gpus)}}}], **spec}}


def store_running(state, pod, ns):
    admitted = admit_pod(state, pod, ns)
    admitted["status"]["phase"] = "Running"
    state.store.create("pods", admitted)


def test_defaults_fill_the_fields_clients_read(tmp_path):
    state = make_state(tmp_path)
    p = admit_pod(state, gpu_pod("a"), "team-vision")
    spec = p["spec"]
    assert p["metadata"]["namespace"] == "team-vision" and p["metadata"]["uid"]
    assert spec["schedulerName"] == "default-scheduler"
    assert spec["restartPolicy"] == "Always"
    assert spec["terminationGracePeriodSeconds"] == 30
    assert spec["containers"][0]["resources"]["requests"] == {"nvidia.com/gpu": "1"}
    keys = {t["key"] for t in spec["tolerations"]}
    assert {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"} <= keys
    assert p["status"] == {"phase": "Pending", "qosClass": "BestEffort"}


def test_generate_name_gets_a_suffix(tmp_path):
    state = make_state(tmp_path)
    pod = gpu_pod("")
    pod["metadata"] = {"generateName": "job-"}
    p = admit_pod(state, pod, "team-nlp")
    assert p["metadata"]["name"].startswith("job-") and len(p["metadata"]["name"]) == len("job-") + 5


def test_global_default_priority_class_is_applied(tmp_path):
    state = make_state(tmp_path)
    p = admit_pod(state, gpu_pod("a"), "team-vision")
    assert p["spec"]["priorityClassName"] == "gpupoc-normal"
    assert p["spec"]["priority"] == 1000
    assert p["spec"]["preemptionPolicy"] == "Never"


def test_named_priority_class_is_resolved(tmp_path):
    state = make_state(tmp_path)
    p = admit_pod(state, gpu_pod("a", priorityClassName="gpupoc-high"), "team-vision")
    assert p["spec"]["priority"] == 10000 and p["spec"]["preemptionPolicy"] == "PreemptLowerPriority"


def test_unknown_priority_class_is_forbidden(tmp_path):
    state = make_state(tmp_path)
    with pytest.raises(StatusError) as exc:
        admit_pod(state, gpu_pod("x", priorityClassName="foo"), "team-vision")
    assert exc.value.code == 403
    assert exc.value.status["message"] == 'pods "x" is forbidden: no PriorityClass with name foo was found'


def test_quota_exceeded_message_is_the_api_servers(tmp_path):
    state = make_state(tmp_path)
    quota = next(t.quota.gpus for t in state.config.tenants if t.namespace == "team-serving")
    store_running(state, gpu_pod("a", quota), "team-serving")
    with pytest.raises(StatusError) as exc:
        admit_pod(state, gpu_pod("gpu-job-0", 2), "team-serving")
    assert exc.value.code == 403
    assert exc.value.status["message"] == (
        'pods "gpu-job-0" is forbidden: exceeded quota: team-serving-gpu, requested: requests.nvidia.com/gpu=2, '
        f"used: requests.nvidia.com/gpu={quota}, limited: requests.nvidia.com/gpu={quota}")
    assert exc.value.status["details"] == {"name": "gpu-job-0", "kind": "pods"}


def test_quota_ignores_finished_pods(tmp_path):
    state = make_state(tmp_path)
    quota = next(t.quota.gpus for t in state.config.tenants if t.namespace == "team-serving")
    store_running(state, gpu_pod("a", quota), "team-serving")
    done = state.store.get("pods", "team-serving", "a")
    done["status"]["phase"] = "Succeeded"
    state.store.update("pods", done)
    assert admit_pod(state, gpu_pod("b", quota), "team-serving")["metadata"]["name"] == "b"


def test_quota_not_enforced_fault_lets_the_pod_in(tmp_path):
    state = make_state(tmp_path, frozenset({Fault.QUOTA_NOT_ENFORCED}))
    store_running(state, gpu_pod("a", 8), "team-serving")
    assert admit_pod(state, gpu_pod("b", 4), "team-serving")["metadata"]["name"] == "b"


def test_pod_count_quota(tmp_path):
    state = make_state(tmp_path)
    rq = state.store.get("resourcequotas", "team-nlp", "team-nlp-gpu")
    rq["spec"]["hard"]["pods"] = "1"
    store_running(state, gpu_pod("a", 0), "team-nlp")
    expected = "exceeded quota: team-nlp-gpu, requested: pods=1, used: pods=1, limited: pods=1"
    with pytest.raises(StatusError, match=expected):
        admit_pod(state, gpu_pod("b", 0), "team-nlp")


def test_invalid_pod_is_422_with_field_path(tmp_path):
    state = make_state(tmp_path)
    pod = {"metadata": {"name": "bad"}, "spec": {"containers": [{"name": "base"}]}}
    with pytest.raises(StatusError) as exc:
        admit_pod(state, pod, "team-vision")
    assert exc.value.code == 422
    assert exc.value.status["message"] == 'Pod "bad" is invalid: spec.containers[0].image: Required value'


def test_missing_namespace_is_404(tmp_path):
    state = make_state(tmp_path)
    with pytest.raises(StatusError) as exc:
        admit_pod(state, gpu_pod("a"), "nope")
    assert exc.value.code == 404


def test_scheduling_gates_set_the_gated_condition(tmp_path):
    state = make_state(tmp_path)
    p = admit_pod(state, gpu_pod("g", schedulingGates=[{"name": "gpupoc.io/wave"}]), "team-vision")
    cond = p["status"]["conditions"][0]
    assert (cond["type"], cond["status"], cond["reason"]) == ("PodScheduled", "False", "SchedulingGated")
    assert cond["message"] == "Scheduling is blocked due to non-empty scheduling gates"


def test_qos_class():
    def pod(res):
        return {"spec": {"containers": [{"name": "c", "resources": res}]}}
    assert qos_class(pod({})) == "BestEffort"
    same = {"cpu": "1", "memory": "1Gi"}
    assert qos_class(pod({"limits": same, "requests": same})) == "Guaranteed"
    assert qos_class(pod({"requests": {"cpu": "1"}})) == "Burstable"


def test_numeric_quantities_are_stored_as_strings(tmp_path):
    state = make_state(tmp_path)
    pod = gpu_pod("n")
    pod["spec"]["containers"][0]["resources"] = {"limits": {"nvidia.com/gpu": 2, "cpu": 0.5}}
    res = admit_pod(state, pod, "team-vision")["spec"]["containers"][0]["resources"]
    assert res["limits"] == {"nvidia.com/gpu": "2", "cpu": "500m"}
    assert res["requests"] == {"nvidia.com/gpu": "2", "cpu": "500m"}


@pytest.mark.parametrize("pod", [
    {"metadata": {"name": "a", "labels": "x"}, "spec": {"containers": [{"name": "b", "image": "i"}]}},
    {"metadata": {"name": "a"}, "spec": {"containers": "x"}},
    {"metadata": {"name": "a"}, "spec": {"containers": [{"name": "b", "image": "i", "resources": "x"}]}},
    {"metadata": {"name": "a"}, "spec": {"containers": [{"name": "b", "image": "i"}], "priority": "7"}},
    {"metadata": "a", "spec": {}},
    [],
])
def test_wrongly_typed_fields_are_400_not_a_crash(tmp_path, pod):
    state = make_state(tmp_path)
    with pytest.raises(StatusError) as exc:
        admit_pod(state, pod, "team-vision")
    assert exc.value.code == 400 and "cannot" in exc.value.status["message"]


def test_init_containers_are_validated_too(tmp_path):
    state = make_state(tmp_path)
    pod = gpu_pod("i")
    pod["spec"]["initContainers"] = [{}]
    with pytest.raises(StatusError) as exc:
        admit_pod(state, pod, "team-vision")
    assert exc.value.code == 422 and "spec.initContainers[0].name: Required value" in exc.value.status["message"]


@pytest.mark.parametrize("given,added", [
    ([], {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}),
    ([{"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 8}],
     {"node.kubernetes.io/not-ready"}),
    ([{"operator": "Exists"}], set()),                       # an empty key and effect tolerates every taint
    ([{"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoSchedule"}],
     {"node.kubernetes.io/not-ready", "node.kubernetes.io/unreachable"}),  # NoSchedule does not count
])
def test_default_toleration_seconds_adds_300s_only_where_the_pod_has_none(tmp_path, given, added):
    pod = admit_pod(make_state(tmp_path), gpu_pod("tol", tolerations=[dict(t) for t in given]), "team-vision")
    new = [t for t in pod["spec"]["tolerations"] if t not in given]
    assert {t["key"] for t in new} == added
    assert all(t["tolerationSeconds"] == 300 and t["effect"] == "NoExecute" and t["operator"] == "Exists"
               for t in new)
