"""Which of a platform's texts explain a wait: only those naming a cause, in any language and wording."""

import pytest

from gpupoc.pipeline.readable import Cause, ClusterNames, ExplainContext, PodRefs, causes_named, classify_message, \
    explains

POD = PodRefs("team-nlp", "qc-1-7f3a", frozenset({"nvidia.com/gpu", "cpu", "memory", "pods"}),
              frozenset({"gpupoc.io/pool", "gpupoc.io/pool=training", "nvidia.com/gpu"}), "qc-ddp-4x1g-1a2b3",
              frozenset({"3c5e1d2a-0000-4000-8000-000000000001"}))
CLUSTER = ClusterNames(
    queues=frozenset({"training", "inference", "team-nlp", "team-vision", "team-nlp-gpu", "default-flavor"}),
    priority_classes=frozenset({"gpupoc-high", "gpupoc-low"}),
    pod_groups=frozenset({"qc-ddp-4x1g-1a2b3", "qc-train-2x8g-9f9f9"}),
    workloads=frozenset({"qc-2-0b1c", "0a1b2c3d-0000-4000-8000-000000000002"}),
    nodes=frozenset({"training-node-1", "training-node-4", "gpu-node-1"}), taints=frozenset({"nvidia.com/gpu"}),
    gang_sizes={"qc-ddp-4x1g-1a2b3": frozenset({4})})
CTX = ExplainContext(POD, CLUSTER)

# Wordings of our own invention that say only that the pod waits: none names a cause.
VAGUE = [
    "Pod is pending.", "Waiting.", "Job queued", "Pods are pending.", "Scheduling...", "Waiting for resources.",
    "Not ready yet, 4 nodes busy", "Pod team-nlp/qc-1-7f3a is waiting on gpu-node-1.", "Your job is in the queue.",
    "The cluster is busy, please wait", "Insufficient resources", "Pending: 1 Unschedulable",
    "调度中", "等待调度。", "排队中", "资源不足", "任务已进入队列", "Pod 正在等待调度", "作业等待中，请稍候",
    "集群繁忙，请稍后", "Pod team-nlp/qc-1-7f3a 等待调度",
]
# Today's placeholders: gates, empty texts, node counts, Volcano's "can possibly be assigned", KAI's bare error.
PLACEHOLDERS = [
    ("SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates"),
    ("SchedulingGated", "anything the gate says, even Insufficient nvidia.com/gpu"),
    ("Unschedulable", ""), ("Unschedulable", None), ("Pending", "   "),
    ("Unschedulable", "0/5 nodes are available."), ("Unschedulable", "0/4 nodes are unavailable."),
    ("Schedulable", "Pod team-nlp/qc-1-7f3a can possibly be assigned to training-node-1"),
    ("Undetermined", "all nodes are unavailable"), ("Unschedulable", "Unable to schedule podgroup"),
    ("FilteringFailed", "no available node, 4 nodes do not meet"),  # HAMi's summary, without its reasons
]


@pytest.mark.parametrize("message", VAGUE)
def test_vague_wordings_explain_nothing_in_english_or_chinese(message):
    assert causes_named(message, CTX) == set()
    assert explains("FailedScheduling", message, CTX) is False


@pytest.mark.parametrize("reason, message", PLACEHOLDERS)
def test_gates_empty_texts_and_known_placeholders_explain_nothing(reason, message):
    assert explains(reason, message, CTX) is False


@pytest.mark.parametrize("message, causes", [
    # kube-scheduler (framework FitError, DefaultPreemption)
    ("0/5 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 3 Insufficient nvidia.com/gpu.",
     {Cause.PLACEMENT, Cause.RESOURCE}),
    ("0/3 nodes are available: 3 Too many pods.", {Cause.RESOURCE}),
    ("0/3 nodes are available: 1 node(s) had untolerated taint {nvidia.com/gpu: present}, 2 Insufficient cpu.",
     {Cause.PLACEMENT, Cause.RESOURCE}),
    ('pods "x" is forbidden: exceeded quota: team-nlp-gpu, requested: requests.nvidia.com/gpu=2',
     {Cause.QUOTA, Cause.RESOURCE}),
    # Kueue Workload QuotaReserved=False
    ("couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor default-flavor, "
     "2 more needed", {Cause.QUOTA, Cause.RESOURCE}),
    # Volcano (plugins/gang, api/job_info.go, plugins/capacity)
    ("1/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable", {Cause.GANG}),
    ("Not enough valid tasks for gang-scheduling, valid: 1, min: 4", {Cause.GANG}),
    ("queue resource quota insufficient: insufficient nvidia.com/gpu", {Cause.QUOTA, Cause.RESOURCE}),
    ("0/3 nodes are unavailable: 3 Insufficient nvidia.com/gpu.", {Cause.RESOURCE}),
    # KAI (common_info, api/messages, status_updater)
    ("team-vision quota has reached the allowable limit of GPUs. Limit is 8 GPUs, currently 8 GPUs allocated and "
     "workload requested 1 GPUs", {Cause.QUOTA, Cause.RESOURCE}),
    ("Job is not ready for scheduling. Waiting for 4 pods, currently 2 exist, 0 are gated", {Cause.GANG}),
    ("no nodes with enough resources were found: 3 node(s) didn't have enough resources: GPUs.", {Cause.RESOURCE}),
    # HAMi (pkg/scheduler/score.go "%d nodes %s(%s)", pkg/device/common reasons)
    ("1 nodes CardInsufficientMemory(training-node-1)", {Cause.RESOURCE}),
    ("2 nodes NodeInsufficientDevice(training-node-1,training-node-4)", {Cause.RESOURCE}),
    ("1 nodes ResourceQuotaNotFit(training-node-1)", {Cause.QUOTA}),
    # Chinese consoles naming the short resource, the queue, the position, the priority
    ("0/3 个节点可用：3 个节点 nvidia.com/gpu 不足。", {Cause.RESOURCE}),
    ("GPU 资源不足", {Cause.RESOURCE}), ("显卡不足，请等待", {Cause.RESOURCE}),
    ("排队第 3 位", {Cause.POSITION}), ("被高优先级任务抢占", {Cause.PRIORITY}),
    ("队列 training 的配额已用完", {Cause.QUOTA}), ("节点污点不被容忍", {Cause.PLACEMENT}),
    # positions, the workloads ahead, priority classes, the gang by name
    ("position in ClusterQueue: 3", {Cause.POSITION}), ("waiting behind qc-2-0b1c", {Cause.POSITION}),
    ("3 workloads ahead", {Cause.POSITION}), ("waiting for gpupoc-high workloads", {Cause.PRIORITY}),
    ("pod group qc-ddp-4x1g-1a2b3 waits for its members", {Cause.GANG}),
])
def test_texts_that_name_a_cause_explain_whatever_their_wording(message, causes):
    assert causes_named(message, CTX) == causes
    assert explains("Unschedulable", message, CTX) is True


def test_what_a_text_names_depends_on_the_pod_and_the_cluster():
    bare = ExplainContext(PodRefs("team-nlp", "p"))
    assert causes_named("Insufficient memory", CTX) == {Cause.RESOURCE}
    assert causes_named("Insufficient memory", bare) == set()  # the pod asks no memory
    assert causes_named("waiting behind qc-2-0b1c", bare) == set()  # a name the cluster does not have
    assert causes_named("Job is not ready for scheduling. Waiting for 4 pods", bare) == set()  # no gang
    assert causes_named("queued in training", CTX) == {Cause.QUOTA} and not causes_named("queued in training", bare)


def test_the_pod_naming_itself_its_namespace_nodes_and_uids_name_nothing():
    for message in ("Pod team-nlp/qc-1-7f3a (uid 3c5e1d2a-0000-4000-8000-000000000001) is pending in team-nlp",
                    "qc-1-7f3a waits for training-node-4", "Pod waits on gpu-node-1", "node training-node-1 chosen"):
        assert causes_named(message, CTX) == set(), message


def test_a_gang_count_is_not_a_node_count():
    assert causes_named("0/4 nodes are available.", CTX) == set()
    assert causes_named("0/4 节点可用", CTX) == set()
    assert causes_named("2 of 4 members placed", CTX) == {Cause.GANG}


def test_platform_messages_are_classified_by_the_bottleneck_they_name():
    failed = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: " \
             "1 No preemption victims found for incoming pod.."
    assert classify_message(failed) == {"insufficient_gpus"}
    kueue = "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor training"
    assert "quota" in classify_message(kueue)
    assert classify_message('pods "x" is forbidden: exceeded quota: team-a-gpu') == {"quota"}
    assert classify_message("Scheduling is blocked due to non-empty scheduling gates") == {"gated"}
    assert "gang" in classify_message("1/4 tasks in gang unschedulable: pod group is not ready, 4 minAvailable")
    assert classify_message("0/3 个节点可用：3 个节点 nvidia.com/gpu 不足。") == {"insufficient_gpus"}
    assert classify_message(None) == set()


def test_cluster_names_survive_a_round_trip_and_merge():
    again = ClusterNames.from_dict(CLUSTER.to_dict())
    assert again == CLUSTER
    more = ClusterNames(queues=frozenset({"extra"}), gang_sizes={"qc-ddp-4x1g-1a2b3": frozenset({3})})
    merged = CLUSTER.merged(more)
    assert "extra" in merged.queues and merged.gang_sizes["qc-ddp-4x1g-1a2b3"] == {3, 4}


def test_a_pods_refs_come_from_its_spec():
    pod = {"metadata": {"name": "p", "namespace": "ns", "uid": "U-1", "labels": {"gpupoc.io/gang": "g"}},
           "spec": {"nodeSelector": {"gpupoc.io/pool": "training"},
                    "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists"}],
                    "containers": [{"resources": {"limits": {"nvidia.com/gpu": "1"}, "requests": {"cpu": "1"}}}]}}
    refs = PodRefs.of_pod(pod)
    assert refs.resources == {"nvidia.com/gpu", "cpu", "pods"}
    assert refs.placement == {"gpupoc.io/pool", "gpupoc.io/pool=training", "nvidia.com/gpu"}
    assert (refs.gang, refs.own) == ("g", {"u-1"})


def test_a_pod_alone_in_its_pod_group_is_told_of_its_group_only_by_the_groups_stated_size():
    """Volcano keeps a pod group of one for a bare pod; its job fit error states that group's minAvailable."""
    alone = ExplainContext(PodRefs("team-nlp", "p-1", gang="podgroup-3c5e"),
                           ClusterNames(gang_sizes={"podgroup-3c5e": frozenset({1})}))
    undetermined = "1/1 tasks in gang unschedulable: pod group is not ready, 1 Pending, 1 minAvailable; Pending: " \
                   "1 Undetermined"
    assert causes_named(undetermined, alone) == {Cause.GANG}
    for vague in ("Pending: 1 Unschedulable", "1 pod pending", "Waiting for 1 pods"):
        assert causes_named(vague, alone) == set(), vague


def test_a_pods_group_comes_from_its_gang_label_or_its_schedulers_annotation():
    bare = {"metadata": {"name": "p", "namespace": "ns", "annotations": {"scheduling.k8s.io/group-name": "pg-1"}}}
    assert PodRefs.of_pod(bare).gang == "pg-1"
    member = {"metadata": {"name": "p", "namespace": "ns", "labels": {"gpupoc.io/gang": "g"},
                           "annotations": {"scheduling.k8s.io/group-name": "g"}}}
    assert PodRefs.of_pod(member).gang == "g"


def test_hamis_filter_reasons_name_missing_gpus():
    assert classify_message("0/5 nodes are available: 2 4/4 CardInsufficientMemory, 3 node(s) didn't match Pod's "
                            "node affinity/selector.") == {"insufficient_gpus", "placement"}
    assert classify_message("2 nodes CardTimeSlicingExhausted(node-a,node-b)") == {"insufficient_gpus"}
    assert classify_message("1 nodes CardTypeMismatch(node-a)") == set()


def _strip_one_pattern_per_name(text, names, exclude=()):
    """What ``readable._strip`` does, the plain way: every name's pattern tried on the text, longest first."""
    from gpupoc.pipeline.readable import _name_rx

    hit = False
    for n in sorted(set(names) - set(exclude), key=lambda n: (-len(n), n)):
        text, k = _name_rx(n).subn(" ", text)
        hit = hit or k > 0
    return text, hit


def test_names_are_stripped_from_a_text_as_one_pattern_per_name_would_strip_them():
    import random

    from gpupoc.pipeline.readable import _strip

    rng = random.Random(24)
    alphabet = "ab1.-/_ :队"
    filler = {f"node-{i}" for i in range(70)} | {"a b", ".a", "队1"}
    for _ in range(2000):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randint(0, 24)))
        pieces = [text[i:j] for i in range(len(text)) for j in range(i + 1, min(len(text), i + 8) + 1)]
        names = set(rng.sample(pieces, min(len(pieces), 6))) | {"".join(rng.choice(alphabet) for _ in range(3))}
        exclude = set(rng.sample(sorted(names), 1)) if rng.random() < 0.3 else set()
        for given in (names, frozenset(names), sorted(names)):
            assert _strip(text, given, exclude=exclude) == _strip_one_pattern_per_name(text, names, exclude), \
                (text, names, exclude)
        many = frozenset(names | filler)  # a cluster-sized set: its odd names are sorted out once
        assert _strip(text, many, exclude=exclude) == _strip_one_pattern_per_name(text, many, exclude)


def test_a_cluster_of_a_thousand_nodes_and_ten_thousand_pods_names_no_cause_by_a_node_or_pod_alone():
    nodes = frozenset(f"training-node-{i}" for i in range(1000))
    pods = frozenset(f"qc-v-sweep-1g-{i:05d}-ab12cd34" for i in range(10000))
    ctx = ExplainContext(POD, ClusterNames(nodes=nodes, workloads=pods))
    assert causes_named("Pod team-nlp/qc-1-7f3a is waiting on training-node-999.", ctx) == set()
    assert causes_named("waiting behind qc-v-sweep-1g-00042-ab12cd34.", ctx) == {Cause.POSITION}
    assert causes_named("0/1002 nodes are available: 1000 Insufficient nvidia.com/gpu.", ctx) == {Cause.RESOURCE}
