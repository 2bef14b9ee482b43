"""``gpupoc demo --cluster kwok``: the POC on a real Kubernetes control plane whose nodes are KWOK's.

etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok run as local processes
(``gpupoc.controlplane``) under ``var/demo/control-plane``, afresh on every demo as the simulated cluster is;
the plan's pools become KWOK GPU nodes. The plan is then given to it as a user gives it to their own cluster
(``gpupoc.demo.from_manifests``): ``gpupoc cluster manifests`` applied with the built kubectl, the identities'
kubeconfig from real TokenRequest tokens, and ``gpupoc preflight``, which must pass before any class runs.

The simulated cluster's own ``sim`` node injector cannot fail a real node: the demo's plan fails KWOK nodes
with the ``taint`` injector instead (the real taint-eviction controller evicts the pods), and says so.
"""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Callable

from gpupoc.demo.pids import PidFile

CLUSTERS = ("sim", "kwok")
KWOK_INJECTOR = {"method": "taint"}  # how the demo fails a KWOK node (``gpupoc.plan.injector_spec``)
SIM_PLATFORM_NAME, KWOK_PLATFORM_NAME = "gpupoc-sim", "gpupoc-kwok"


def check_kwok_options(faults: str, behaviours: str, from_manifests: bool) -> None:
    """Refuse what only the simulated cluster can do, before anything starts."""
    from gpupoc.exceptions import GpupocError

    if faults or behaviours:
        raise GpupocError("--cluster kwok: fault and behaviour profiles are the simulated cluster's own "
                          f"({faults or behaviours}); drop --faults/--behaviour (FAULTS=, BEHAVIOUR=) or use the "
                          "simulated cluster")
    if from_manifests:
        raise GpupocError("--cluster kwok always gives the cluster the plan from its manifests; drop "
                          "--cluster-from-manifests (FROM_MANIFESTS=1)")


def control_plane_dir(var: Path) -> Path:
    """Where the demo's control plane keeps its data, logs, keys and kubeconfigs."""
    return var / "demo" / "control-plane"


def plan_kubeconfig(var: Path) -> Path:
    """The identities' kubeconfig ``gpupoc cluster kubeconfig`` writes for the demo's plan."""
    return control_plane_dir(var) / "kubeconfig-plan"


REAL_MODES = ("kube", "kueue")  # the plan adapters' modes served for real here (kube-scheduler; Kueue beside it)


def check_kwok_mode(mode: str) -> None:
    """Refuse a scheduler that cannot run for real here, before anything starts."""
    from gpupoc.exceptions import GpupocError

    if mode not in REAL_MODES:
        raise GpupocError(f"--cluster kwok: the plan's adapter (scheduler mode {mode}) is not served on the real "
                          "control plane: only kube-scheduler and Kueue are built here (Volcano, KAI and HAMi stay "
                          "simulated); choose a kube-scheduler or kueue platform (--platform kube|kueue) or drop "
                          "--cluster kwok")


def check_kwok_queues(mode: str, plan_file: Path, platform: str = "") -> None:
    """Refuse a Kueue plan without ClusterQueues of its own on the real control plane, before anything starts: the
    simulated cluster ships its Kueue mode's queues, but on a real cluster only the plan's manifests make them."""
    from gpupoc.exceptions import ConfigError
    from gpupoc.plan import load_plan

    if mode != "kueue":
        return
    plan = load_plan(f"{plan_file}#{platform}" if platform else plan_file, kubeconfig_later=True)
    queues = plan.cluster.queues.kueue if plan.cluster and plan.cluster.queues else None
    if not (queues and queues.cluster_queues):
        raise ConfigError(str(plan_file), [
            "cluster.queues.kueue.cluster_queues: --cluster kwok runs real Kueue, and nothing there makes the "
            "ClusterQueues the tenants' LocalQueues point to (the simulated cluster ships its own); define them "
            "in the plan as plans/kueue.yaml does, or run this platform on the simulated cluster"])


# what Kueue does not account when the ClusterQueues cover nvidia.com/gpu only (docs/real-cluster.md)
GPU_ONLY = ("cpu", "memory", "ephemeral-storage")


def check_sim_gpus(gpus: str) -> None:
    """Refuse DRA GPUs on the simulated cluster, before anything starts: it publishes no ResourceSlices and its
    scheduler allocates no claims."""
    from gpupoc.exceptions import GpupocError

    if gpus == "dra":
        raise GpupocError("platform.options.gpus: dra needs the real kube-scheduler, which allocates the DRA devices: "
                          "run the demo with --cluster kwok (make demo CLUSTER=kwok); the simulated cluster "
                          "publishes no ResourceSlices. Or set gpus: device-plugin")


def check_sim_gangs(gangs: str) -> None:
    """Refuse Workload-API gangs on the simulated cluster, before anything starts: it serves no
    scheduling.k8s.io/v1beta1 Workloads and its scheduler has no GangScheduling plugin."""
    from gpupoc.exceptions import GpupocError

    if gangs == "workload-api":
        raise GpupocError("platform.options.gangs: workload-api needs the real kube-scheduler's GangScheduling "
                          "plugin (Kubernetes v1.37, GenericWorkload): run the demo with --cluster kwok (make demo "
                          "CLUSTER=kwok); the simulated cluster serves no Workload API. Or set gangs: adapter")


def start_kwok_cluster(var: Path, table: PidFile, base_plan: Path, out: Callable[[str], None],
                       mode: str = "kube", dra: bool = False, workload_api: bool = False) -> dict:
    """A fresh control plane with the base plan's pools as KWOK nodes (their GPUs DRA devices when ``dra``:
    the plan's ``platform.options.gpus``), and real Kueue beside it when the plan's adapter is Kueue (``mode``);
    what the demo needs of it (the shape of the simulated cluster's ``sim.json``: url, kubeconfig, audit_log)
    and its Kubernetes version."""
    from gpupoc.controlplane.flags import Features
    from gpupoc.controlplane.plane import start_control_plane, stop_control_plane
    from gpupoc.plan import load_plan

    from gpupoc.controlplane.exporter_process import stop_exporter

    root = control_plane_dir(var)
    stop_exporter(root)
    stop_control_plane(root)  # a clean cluster on every demo, as the simulated one
    shutil.rmtree(root, ignore_errors=True)
    table.meta["control_plane"] = str(root)
    table.save()
    cp = start_control_plane(root, plan=load_plan(base_plan, kubeconfig_later=True), features=Features(dra=dra, workload_api=workload_api))
    nodes = sum(p.nodes for p in load_plan(base_plan, kubeconfig_later=True).pools)
    gpus = (", GPUs as DRA devices (ResourceSlices of gpu.gpupoc.io)" if dra else "") + \
        (", the Workload API's gangs (GenericWorkload)" if workload_api else "")
    out(f"        Kubernetes {cp.version} at {cp.server}: {nodes} KWOK nodes{gpus}, in {cp.timings['total']:.1f} s "
        f"(data {root})")
    if mode == "kueue":
        from gpupoc.controlplane.kueue import start_kueue
        from gpupoc.controlplane.kueue_manifests import KueueSettings

        queues = load_plan(base_plan, kubeconfig_later=True).cluster.queues.kueue
        fair = bool(queues and queues.fair_sharing)  # the plan's Kueue Configuration, as its cluster holds it
        # the plan's ClusterQueues (gpupoc cluster manifests) cover GPUs only: Kueue accounts nothing else
        kueue = start_kueue(cp, KueueSettings(fair_sharing=fair, exclude_resource_prefixes=GPU_ONLY))
        out(f"        Kueue {kueue.version} beside it (pid {kueue.pid}{', fair sharing' if fair else ''})")
    return {"url": cp.server, "kubeconfig": str(cp.kubeconfig), "audit_log": str(cp.audit_log),
            "version": cp.version, "kubectl": str(cp.kubectl), "root": str(root), "gpus": "dra" if dra else
            "device-plugin"}


def stop_kwok_cluster(table: PidFile) -> dict[str, str]:
    """``gpupoc down``: the demo's control plane, when one was started; component -> outcome."""
    root = table.meta.pop("control_plane", None)
    if not root:
        return {}
    from gpupoc.controlplane.exporter_process import stop_exporter
    from gpupoc.controlplane.plane import stop_control_plane

    stopped = ["exporter"] if stop_exporter(Path(root)) else []
    return {f"control-plane {c}": "stopped" for c in stopped + stop_control_plane(Path(root))}


def kwok_injectors(data: dict) -> list[str]:
    """The plan (as read from YAML) with every node failure that the ``sim`` injector would provoke, explicitly
    or by default, given ``KWOK_INJECTOR`` instead; one line per change (for the console and the plan's header)."""
    spec = ((data.get("test_classes") or {}).get("fault_recovery") or {})
    changed: list[str] = []
    platform = data.get("platform") or {}
    if platform.get("name") == SIM_PLATFORM_NAME:  # the default plans' name for the simulated cluster
        platform["name"] = KWOK_PLATFORM_NAME
        changed.append(f"platform.name: {KWOK_PLATFORM_NAME} (the report names what it judged)")
    for i, inj in enumerate(spec.get("injections") or []):
        if isinstance(inj, dict) and inj.get("kind") == "node_failure" and _is_sim(inj.get("injector")):
            inj["injector"] = dict(KWOK_INJECTOR)
            changed.append(f"test_classes.fault_recovery.injections[{i}].injector: taint (sim fails no real node)")
    for i, failure in enumerate(spec.get("service_failures") or []):
        if isinstance(failure, dict) and "injector" in failure and _is_sim(failure.get("injector")):
            failure["injector"] = dict(KWOK_INJECTOR)
            changed.append(f"test_classes.fault_recovery.service_failures[{i}].injector: taint")
    return changed


def _is_sim(injector: object) -> bool:
    """An injector left to its default (``sim``) or naming ``sim``."""
    if injector is None:
        return True
    method = injector if isinstance(injector, str) else (injector or {}).get("method", "sim")
    return method == "sim"



def start_kwok_metrics(var: Path, table: PidFile, cluster: dict, out: Callable[[str], None]) -> str:
    """The project's dcgm-exporter and kube-state-metrics series of the control plane's pods and KWOK nodes
    (``gpupoc.controlplane.exporter``), served on loopback for Prometheus; its URL."""
    from gpupoc.controlplane.exporter_process import spawn_exporter

    exporter = spawn_exporter(Path(cluster["root"]))
    out(f"        GPU and kube-state series of its pods: {exporter.url} (log {exporter.log})")
    return exporter.url
