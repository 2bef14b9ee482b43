"""The manifests a plan renders: what each document holds and that they read back as YAML objects."""

import yaml

from gpupoc.cluster.manifests import manifest_documents, quota_name, render_manifests
from gpupoc.kube.schedulers import SchedulerMode
from gpupoc.plan import load_plan
from gpupoc.plan.loader import DEFAULT_PLAN
from gpupoc.sim.config import load_cluster_config, shipped_config

PLANS = DEFAULT_PLAN.parent


def _objects(plan):
    return [d for d in yaml.safe_load_all(render_manifests(plan)) if d]


def test_the_default_plan_renders_its_namespaces_identities_rbac_quotas_and_priorities():
    plan = load_plan(DEFAULT_PLAN)
    objs = _objects(plan)
    kinds = [o["kind"] for o in objs]
    assert kinds.index("Namespace") < kinds.index("ServiceAccount") < kinds.index("Role") < kinds.index("RoleBinding")
    ns = {o["metadata"]["name"] for o in objs if o["kind"] == "Namespace"}
    assert ns == {"gpupoc-system", *(t.namespace for t in plan.tenants)}
    quotas = {o["metadata"]["namespace"]: o["spec"]["hard"] for o in objs if o["kind"] == "ResourceQuota"}
    assert quotas["team-nlp"] == {"requests.nvidia.com/gpu": "24", "pods": "60"}
    pcs = {o["metadata"]["name"]: o["value"] for o in objs if o["kind"] == "PriorityClass"}
    assert pcs == {pc.name: pc.value for pc in plan.priority_classes}
    sas = {(o["metadata"]["namespace"], o["metadata"]["name"]) for o in objs if o["kind"] == "ServiceAccount"}
    assert ("gpupoc-system", "gpupoc-runner") in sas and ("team-vision", "runner") in sas
    assert not any(o["kind"] in ("ClusterQueue", "Queue") for o in objs), "kube-scheduler has no queues"


def test_tenants_are_bound_in_their_namespace_and_the_runner_never_cluster_admin():
    objs = _objects(load_plan(DEFAULT_PLAN))
    bindings = [o for o in objs if o["kind"] in ("RoleBinding", "ClusterRoleBinding")]
    for b in bindings:
        assert b["roleRef"]["name"] != "cluster-admin"
        subject = b["subjects"][0]
        if subject["name"] == "runner":
            assert b["kind"] == "RoleBinding" and subject["namespace"] == b["metadata"]["namespace"]
    crb = [b for b in bindings if b["kind"] == "ClusterRoleBinding"]
    assert [b["roleRef"]["name"] for b in crb] == ["gpupoc-runner"]
    for role in (o for o in objs if o["kind"] in ("Role", "ClusterRole")):
        for rule in role["rules"]:
            assert "*" not in rule["verbs"] and "*" not in rule["resources"], rule


def test_every_rule_carries_the_classes_that_use_it():
    text = render_manifests(load_plan(DEFAULT_PLAN))
    lines = text.splitlines()
    for i, line in enumerate(lines):
        if line.startswith("  - {apiGroups:"):
            assert lines[i - 1].startswith("  # "), f"rule without its comment: {line}"


def test_the_kueue_plan_renders_the_queues_the_simulated_cluster_is_configured_with():
    plan = load_plan(PLANS / "kueue.yaml")
    objs = _objects(plan)
    cqs = {o["metadata"]["name"]: o["spec"] for o in objs if o["kind"] == "ClusterQueue"}
    sim = load_cluster_config(shipped_config(SchedulerMode.KUEUE)).kueue
    assert set(cqs) == {cq.name for cq in sim.cluster_queues}
    assert cqs["team-nlp-training"]["cohort"] == "training"
    flavors = {o["metadata"]["name"]: o["spec"]["nodeLabels"] for o in objs if o["kind"] == "ResourceFlavor"}
    assert flavors == {"training": {"gpupoc.io/pool": "training"}, "inference": {"gpupoc.io/pool": "inference"}}
    lqs = {(o["metadata"]["namespace"], o["metadata"]["name"]): o["spec"]["clusterQueue"] for o in objs
           if o["kind"] == "LocalQueue"}
    assert lqs[("team-nlp", "training")] == "team-nlp-training"
    assert all("status" not in o for o in objs), "the manifests hold no status"


def test_the_adapter_plans_declare_the_simulated_clusters_queue_setup():
    for mode in (SchedulerMode.KUEUE, SchedulerMode.VOLCANO, SchedulerMode.KAI):
        plan = load_plan(PLANS / f"{mode.value}.yaml")
        assert getattr(plan.cluster.queues, mode.value) == getattr(load_cluster_config(shipped_config(mode)),
                                                                   mode.value), mode


def test_volcano_and_kai_render_their_queues_with_their_parents():
    kai = {o["metadata"]["name"]: o for o in _objects(load_plan(PLANS / "kai.yaml")) if o["kind"] == "Queue"}
    assert kai["team-nlp"]["apiVersion"] == "scheduling.run.ai/v2" and kai["team-nlp"]["spec"]["parentQueue"] == "gpupoc"
    vol = {o["metadata"]["name"]: o for o in _objects(load_plan(PLANS / "volcano.yaml")) if o["kind"] == "Queue"}
    assert vol["team-vision"]["spec"]["weight"] == 2 and vol["team-vision"]["apiVersion"] == "scheduling.volcano.sh/v1beta1"


def test_a_plan_without_an_artifact_hand_over_needs_no_artifact_index():
    plan = load_plan(DEFAULT_PLAN)
    assert any(d.obj["kind"] == "ConfigMap" for d in manifest_documents(plan))
    at = plan.test_classes.audit_trail.model_copy(update={"artifact": None})
    plan2 = plan.model_copy(update={"test_classes": plan.test_classes.model_copy(update={"audit_trail": at})})
    assert not any(d.obj["kind"] == "ConfigMap" for d in manifest_documents(plan2))
    assert quota_name("team-a") == "team-a-gpu"
