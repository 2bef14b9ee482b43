"""The Kueue scenario's objects, made as the administrator through ``kueue.x-k8s.io/v1beta1`` (which the simulated
Kueue mode serves and real Kueue v0.17 converts): a ResourceFlavor for the training pool, ClusterQueues and
LocalQueues per step, the queued pods, and what a client reads back (a pod's Workload, its name for
normalising)."""

from __future__ import annotations

from gpupoc.fidelity.client import Kube
from gpupoc.fidelity.normalise import shape
from gpupoc.fidelity.setup import GPU, Target, ensure, pod, until

API = "/apis/kueue.x-k8s.io/v1beta1"
FLAVOR = "fid-training"
POOL_LABEL = {"gpupoc.io/pool": "training"}
# the flavor's toleration: a key no node carries, so the admitted pod shows whether Kueue injected it
FLAVOR_TOLERATION = {"key": "gpupoc.io/fidelity-flavor", "operator": "Exists", "effect": "NoSchedule"}
QUEUE_LABEL = "kueue.x-k8s.io/queue-name"
WORKLOAD_WORD = "<workload>"


def flavor(admin: Kube) -> None:
    ensure(admin, f"{API}/resourceflavors", {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ResourceFlavor",
                                             "metadata": {"name": FLAVOR},
                                             "spec": {"nodeLabels": POOL_LABEL, "tolerations": [FLAVOR_TOLERATION]}})


def cluster_queue(admin: Kube, name: str, gpus: int, cohort: str = "", preemption: dict | None = None,
                  lending_limit: int | None = None, weight: int | None = None) -> None:
    """A ClusterQueue of ``gpus`` nominal GPUs in the scenario's flavor (any namespace)."""
    quota: dict = {"name": GPU, "nominalQuota": gpus}
    if lending_limit is not None:
        quota["lendingLimit"] = lending_limit
    spec: dict = {"namespaceSelector": {}, "resourceGroups": [
        {"coveredResources": [GPU], "flavors": [{"name": FLAVOR, "resources": [quota]}]}]}
    if cohort:
        spec["cohort"] = cohort
    if preemption:
        spec["preemption"] = preemption
    if weight is not None:
        spec["fairSharing"] = {"weight": str(weight)}
    ensure(admin, f"{API}/clusterqueues", {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "ClusterQueue",
                                           "metadata": {"name": name}, "spec": spec})


def local_queue(admin: Kube, namespace: str, name: str, cq: str) -> None:
    ensure(admin, f"{API}/namespaces/{namespace}/localqueues",
           {"apiVersion": "kueue.x-k8s.io/v1beta1", "kind": "LocalQueue",
            "metadata": {"name": name, "namespace": namespace}, "spec": {"clusterQueue": cq}})


def queued_pod(name: str, queue: str, gpus: int, priority: str | None = None, cpu: str = "") -> dict:
    """A pod for ``queue`` asking ``gpus`` GPUs and nothing else (the ClusterQueues cover GPUs only: real Kueue
    holds a pod asking a resource its ClusterQueue does not cover), or ``cpu`` too; it tolerates the GPU nodes'
    taints, and where it runs is the flavor's (no node selector of its own)."""
    body = pod(name, Target("", 0, []), gpus=gpus, priority=priority)
    body["spec"].pop("nodeSelector", None)
    body["spec"]["tolerations"] = [{"key": GPU, "operator": "Exists", "effect": "NoSchedule"}]
    wanted = {**({GPU: str(gpus)} if gpus else {}), **({"cpu": cpu} if cpu else {})}
    body["spec"]["containers"][0]["resources"] = {"requests": wanted, "limits": dict(wanted)}
    body["metadata"]["labels"][QUEUE_LABEL] = queue
    return body


def create(admin: Kube, namespace: str, body: dict) -> None:
    answer = admin.post(f"/api/v1/namespaces/{namespace}/pods", body)
    if not answer.ok:
        raise RuntimeError(f"the pod {body['metadata']['name']} was refused: {answer.code} "
                           f"{answer.body.get('message', answer.body)}")


def get_pod(admin: Kube, namespace: str, name: str) -> dict:
    return admin.get(f"/api/v1/namespaces/{namespace}/pods/{name}").body


def workload_of(admin: Kube, namespace: str, pod_name: str) -> dict:
    """The Workload owned by the pod ``pod_name`` (empty when there is none yet)."""
    items = admin.get(f"{API}/namespaces/{namespace}/workloads").body.get("items") or []
    return next((w for w in items if any(o.get("kind") == "Pod" and o.get("name") == pod_name
                                         for o in (w.get("metadata") or {}).get("ownerReferences") or [])), {})


def wait_workload(admin: Kube, namespace: str, pod_name: str, done, seconds: float) -> dict:
    """The pod's Workload once ``done`` holds of it (else the last one read)."""
    wl, _ = until(lambda: workload_of(admin, namespace, pod_name), lambda w: bool(w) and done(w), seconds)
    return wl  # type: ignore[return-value]


def condition(obj: dict, kind: str) -> dict:
    st = obj.get("status") if isinstance(obj.get("status"), dict) else {}
    return next((c for c in st.get("conditions") or [] if c.get("type") == kind), {})


def is_true(kind: str):
    return lambda w: condition(w, kind).get("status") == "True"


def reason_is(kind: str, reason: str):
    return lambda w: condition(w, kind).get("reason") == reason


def name_of(obj: dict) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def kshape(text: str | None, workloads: list[str], nodes: list[str]) -> str | None:
    """``shape`` with the Workloads' names (a hash of the pod's UID each) replaced first."""
    if text is None:
        return None
    for wl in sorted({w for w in workloads if w}, key=len, reverse=True):
        text = text.replace(wl, WORKLOAD_WORD)
    return shape(text, nodes)


def delete_pods(admin: Kube, namespace: str, names: list[str], seconds: float = 60.0) -> None:
    """Delete the pods and wait until they are gone (their GPUs and quota free for the next step)."""
    for name in names:
        admin.call("DELETE", f"/api/v1/namespaces/{namespace}/pods/{name}", {"gracePeriodSeconds": 0})
    until(lambda: [n for n in names if get_pod(admin, namespace, n).get("kind") == "Pod"], lambda left: not left,
          seconds)
