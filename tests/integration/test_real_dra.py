"""DRA GPUs and Workload-API gangs on the real kube-scheduler v1.37 (``make control-plane``'s binaries), KWOK
nodes publishing ResourceSlices (``--dra``) with ``GenericWorkload`` on (``--workload-api``): claims made from
ResourceClaimTemplates are allocated a device of the pod's node, a whole card goes to one claim only, a claim
beyond the free cards stays Pending with the scheduler's own words, MIG-like partitions share a card through
its counters, shared cards give out memory as consumable capacity, ``nvidia.com/gpu`` is served by DRA
devices, and a gang binds all of its pods or none."""

from __future__ import annotations

import json

import pytest
import yaml

from gpupoc.controlplane import start_control_plane
from gpupoc.controlplane.dra import allocated_devices, claim_pod, claim_template
from gpupoc.controlplane.dra_slices import MIG_CLASS, SHARED_CLASS
from gpupoc.controlplane.flags import Features
from gpupoc.controlplane.workload_gang import gang, gang_pod, initially_scheduled
from gpupoc.plan import DEFAULT_PLAN, load_plan
from gpupoc.plan.model import Pool
from tests.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("control-plane"), pytest.mark.timeout(900)]

PLAN = load_plan(DEFAULT_PLAN)
# 2 nodes of 2 H100 (MIG-capable) and 1 node of 1 L40S (45 GiB, no MIG): 5 whole cards
POOLS = [Pool.model_validate({**PLAN.pool("training").model_dump(), "nodes": 2, "gpus_per_node": 2,
                              "node_names": []}),
         Pool.model_validate({**PLAN.pool("inference").model_dump(), "nodes": 1, "gpus_per_node": 1,
                              "node_names": []})]
STEP = 60.0
NS = "dra"
NO_FIT = ("0/3 nodes are available: 3 cannot allocate all claims. preemption: 0/3 nodes are available: "
          "3 Preemption is not helpful for scheduling.")

PINNED_NO_FIT = ("0/3 nodes are available: 1 cannot allocate all claims, 2 node(s) didn't match Pod's node "
                 "affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling.")


@pytest.fixture(scope="module")
def cp(tmp_path_factory):
    plane = start_control_plane(tmp_path_factory.mktemp("control-plane"), pools=POOLS, plan=PLAN,
                                process_runner=False, features=Features(dra=True, workload_api=True))
    try:
        yield plane
    finally:
        plane.stop()


@pytest.fixture
def ns(cp):
    """A fresh namespace; afterwards its pods are gone and every claim made for them deallocated."""
    cp.run_kubectl("create", "namespace", NS)
    wait_for("the namespace's default ServiceAccount", lambda: cp.run_kubectl(
        "get", "serviceaccount", "default", "-n", NS, check=False), lambda r: r.returncode == 0, step_seconds=STEP,
        describe=lambda r: r.stderr.strip()[-200:])
    yield NS
    cp.run_kubectl("delete", "pods", "--all", "-n", NS, "--grace-period=0", "--force", check=False)
    wait_for("every claim to be deleted with its pod", lambda: items(cp, "resourceclaims", "-A"), lambda c: not c,
             step_seconds=STEP, describe=lambda c: str([x["metadata"]["name"] for x in c]))
    cp.run_kubectl("delete", "namespace", NS, "--wait=true", timeout=300)


def items(cp, *what: str) -> list[dict]:
    return json.loads(cp.run_kubectl("get", *what, "-o", "json").stdout)["items"]


def apply(cp, objects: list[dict]) -> None:
    cp.run_kubectl("apply", "-f", "-", input=yaml.safe_dump_all(objects))


def settled(cp, ns: str, count: int, pending: int) -> dict[str, dict]:
    """Wait until ``count`` pods exist, all but ``pending`` bound and Running, and the rest told why not."""
    def observe():
        return {p["metadata"]["name"]: p for p in items(cp, "pods", "-n", ns)}

    def done(pods):
        running = [p for p in pods.values() if p["status"].get("phase") == "Running"]
        told = [p for p in pods.values() if unschedulable(p)]
        return len(pods) == count and len(running) == count - pending and len(told) == pending
    return wait_for(f"{count - pending} of {count} pods Running and {pending} unschedulable", observe, done,
                    step_seconds=STEP, describe=lambda ps: str(sorted((n, p["status"].get("phase"))
                                                                     for n, p in ps.items())))


def unschedulable(pod: dict) -> dict | None:
    for c in pod["status"].get("conditions") or []:
        if c["type"] == "PodScheduled" and c["status"] == "False" and c.get("reason") == "Unschedulable":
            return c
    return None


def claims_by_pod(cp, ns: str) -> dict[str, dict]:
    return {c["metadata"]["ownerReferences"][0]["name"]: c for c in items(cp, "resourceclaims", "-n", ns)}


def test_each_whole_gpu_claim_gets_its_own_device_on_the_pods_node_and_the_sixth_waits(cp, ns):
    apply(cp, [claim_template("whole", ns), *(claim_pod(f"w{i}", ns, "whole") for i in range(6))])
    pods = settled(cp, ns, 6, pending=1)
    claims = claims_by_pod(cp, ns)
    taken = []
    for name, pod in pods.items():
        if pod["status"]["phase"] != "Running":
            assert unschedulable(pod)["message"] == NO_FIT
            assert not allocated_devices(claims[name]), "the waiting pod's claim holds no device"
            continue
        (dev,) = allocated_devices(claims[name])
        assert dev.pool == pod["spec"]["nodeName"], "the claim's device is on the pod's node"
        assert dev.device.startswith("gpu-") and dev.device.count("-") == 1, dev
        assert [r["name"] for r in claims[name]["status"]["reservedFor"]] == [name]
        taken.append((dev.pool, dev.device))
    assert len(taken) == 5 and len(set(taken)) == 5, f"no whole card is given twice: {taken}"


def test_mig_like_partitions_share_a_card_through_its_counters(cp, ns):
    node = "training-node-1"  # two H100: one given whole, the other cut into seven 1g.10gb partitions
    small = "device.attributes['gpu.gpupoc.io'].profile == '1g.10gb'"
    apply(cp, [claim_template("whole", ns), claim_template("mig", ns, MIG_CLASS, selector=small),
               claim_pod("whole", ns, "whole", node=node)])
    settled(cp, ns, 1, pending=0)
    apply(cp, [claim_pod(f"m{i}", ns, "mig", node=node) for i in range(8)])
    pods = settled(cp, ns, 9, pending=1)
    claims = claims_by_pod(cp, ns)
    (whole,) = allocated_devices(claims["whole"])
    parts = [allocated_devices(claims[n])[0].device for n, p in pods.items()
             if n != "whole" and p["status"]["phase"] == "Running"]
    assert len(parts) == 7 and len(set(parts)) == 7
    assert all(not d.startswith(whole.device + "-") for d in parts), f"no partition of the whole card {whole}"
    waiting = next(p for p in pods.values() if p["status"]["phase"] != "Running")
    assert unschedulable(waiting)["message"] == PINNED_NO_FIT


def test_shared_cards_give_out_their_memory_as_consumable_capacity(cp, ns):
    node = "inference-node-1"  # one L40S of 45 GiB: 20 + 20 + 5 GiB fit, a further 1 GiB does not
    apply(cp, [claim_template("s20", ns, SHARED_CLASS, memory="20Gi"), claim_template("s5", ns, SHARED_CLASS,
                                                                                        memory="5Gi"),
               claim_template("s1", ns, SHARED_CLASS, memory="1Gi"), claim_template("whole", ns)])
    apply(cp, [claim_pod("a", ns, "s20", node=node), claim_pod("b", ns, "s20", node=node),
               claim_pod("c", ns, "s5", node=node)])
    settled(cp, ns, 3, pending=0)
    apply(cp, [claim_pod("d", ns, "s1", node=node), claim_pod("whole", ns, "whole", node=node)])
    pods = settled(cp, ns, 5, pending=2)
    claims = claims_by_pod(cp, ns)
    shares = {n: allocated_devices(claims[n])[0] for n in "abc"}
    assert {d.device for d in shares.values()} == {"gpu-0-shared"}, "three claims hold one shared card"
    assert {n: d.consumed for n, d in shares.items()} == {"a": {"memory": "20Gi"}, "b": {"memory": "20Gi"},
                                                           "c": {"memory": "5Gi"}}
    assert {n for n, p in pods.items() if p["status"]["phase"] != "Running"} == {"d", "whole"}, \
        "the card's memory is used up, and a shared card is not also given whole"
    assert unschedulable(pods["d"])["message"] == unschedulable(pods["whole"])["message"] == PINNED_NO_FIT


def test_a_pods_nvidia_com_gpu_is_served_by_dra_devices(cp, ns):
    pod = gang_pod("ext", ns, "none", 2)
    del pod["spec"]["schedulingGroup"]
    apply(cp, [pod])
    pods = settled(cp, ns, 1, pending=0)
    status = pods["ext"]["status"]["extendedResourceClaimStatus"]
    assert status["requestMappings"] == [{"containerName": "main", "requestName": "container-0-request-0",
                                          "resourceName": "nvidia.com/gpu"}]
    claim = json.loads(cp.run_kubectl("get", "resourceclaim", status["resourceClaimName"], "-n", ns,
                                      "-o", "json").stdout)
    assert claim["metadata"]["annotations"] == {"resource.kubernetes.io/extended-resource-claim": "true"}
    devices = allocated_devices(claim)
    assert len(devices) == 2 and {d.pool for d in devices} == {pods["ext"]["spec"]["nodeName"]}


def test_a_gang_larger_than_the_free_gpus_binds_none_of_its_pods(cp, ns):
    apply(cp, gang("big", ns, 3, 2))  # three pods of 2 GPUs: only the two H100 nodes hold two
    group = wait_for("the PodGroup to be found unschedulable", lambda: json.loads(cp.run_kubectl(
        "get", "podgroup", "big", "-n", ns, "-o", "json").stdout), initially_scheduled, step_seconds=STEP,
        describe=lambda g: str(g.get("status")))
    cond = initially_scheduled(group)
    assert (cond["status"], cond["reason"]) == ("False", "Unschedulable")
    assert cond["message"].startswith("minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"), cond
    pods = items(cp, "pods", "-n", ns)
    assert len(pods) == 3 and not [p["metadata"]["name"] for p in pods if p["spec"].get("nodeName")]


def test_a_gang_that_fits_binds_all_of_its_pods(cp, ns):
    apply(cp, gang("fits", ns, 2, 2))
    pods = settled(cp, ns, 2, pending=0)
    assert len({p["spec"]["nodeName"] for p in pods.values()}) == 2
    cond = initially_scheduled(json.loads(cp.run_kubectl("get", "podgroup", "fits", "-n", ns, "-o", "json").stdout))
    assert (cond["status"], cond["reason"]) == ("True", "Scheduled")
