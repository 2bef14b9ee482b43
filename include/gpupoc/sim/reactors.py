"""The points where a fault profile changes the simulated cluster: its reactors.

As client-go's fake clientset lets a test prepend a reactor to a verb, each field here is one decision of the
correct platform, held by ``ClusterState.reactors`` and read by the controller or API handler that makes it.
Every field starts as the correct platform's answer; a fault profile (``sim/fault_profiles/<name>.py``,
installed by ``bootstrap`` from the table in ``sim/fault_profiles/__init__.py``) replaces or wraps the fields it
changes. So the controllers hold no fault branches: they ask their reactor, whatever profile is planted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from gpupoc.sim import rbac
from gpupoc.sim.pod_state import TERMINAL, is_ready
from gpupoc.sim.ports import Reconciler
from gpupoc.sim.store import Store

Authorizer = Callable[[Store, rbac.Attributes], rbac.Decision]
SliceEndpoints = Callable[[dict | None, list[dict], list[dict]], tuple[list[dict], list[dict]]]


def node_count_only(num_nodes: int) -> str:
    """What kube-scheduler, Volcano and KAI say of an unschedulable pod when they name no reason."""
    return f"0/{num_nodes} nodes are available."


def fresh_endpoints(existing: dict | None, endpoints: list[dict], ports: list[dict]) -> tuple[list[dict], list[dict]]:
    """A Service's slice becomes what its pods are now (``existing``, the slice as it is, is not kept)."""
    return endpoints, ports


def never_keeps_gpus(phase: str | None, deleting: bool) -> bool:
    """An ended pod's GPUs are given back, whatever its phase."""
    return False


def holds_slice_until_ended(pod: dict) -> bool:
    """HAMi counts a bound pod's vGPU slice until the pod ends."""
    return (pod.get("status") or {}).get("phase") not in TERMINAL


def keep_env(env: dict[str, str]) -> dict[str, str]:
    return env


def keep_log(exit_code: int, log) -> None:
    """A container's log stays readable after it exits."""


@dataclass
class Reactors:
    """The correct platform's decisions a fault profile may replace (see the module docstring)."""

    # -- API server --------------------------------------------------------------------------------------
    authorize: Authorizer = rbac.authorize  # RBAC (cross-tenant-logs wraps it)
    disabled_admission: set[str] = field(default_factory=set)  # admission plug-ins off ("ResourceQuota")
    # -- kube-scheduler ----------------------------------------------------------------------------------
    priority_queue: bool = True  # PrioritySort and DefaultPreemption; False: FIFO, nothing preempted
    victim_whatever_priority: Callable[[dict], bool] | None = None  # a pod preempted even by a lower priority
    # -- the queueing schedulers (Kueue, Volcano, KAI) and every scheduler's texts ---------------------
    whole_gangs: bool = True  # a gang binds whole or not at all (Kueue composes pod groups)
    fair_shares: bool = True  # shares and weights order the queues; False: first come, first served
    reclaim_across_queues: bool = True  # a lender takes lent GPUs back (Kueue cohorts, Volcano, KAI)
    reasons_shown: bool = True  # the schedulers say why a pod or gang waits; False: generic texts only
    opaque_fit_error: Callable[[int], str] = node_count_only  # the generic text, by the number of nodes
    # -- kubelet, node controller, pod deletion ------------------------------------------------------
    keeps_gpus: Callable[[str | None, bool], bool] = never_keeps_gpus  # (phase, deleting): GPUs not released
    container_exited: Callable[[int, object], None] = keep_log  # (exit code, its log) once a container ends
    # -- HAMi --------------------------------------------------------------------------------------------
    holds_slice: Callable[[dict], bool] = holds_slice_until_ended  # a bound pod's slice counts as used
    card_memory_checked: bool = True  # the scheduler places no more gpumem on a card than it has
    device_env: Callable[[dict[str, str]], dict[str, str]] = keep_env  # the env the device plugin injects
    # -- serving -----------------------------------------------------------------------------------------
    endpoint_ready: Callable[[dict], bool] = is_ready  # a pod is a ready endpoint of its Services
    slice_endpoints: SliceEndpoints = fresh_endpoints  # (the slice, its pods' endpoints, ports) -> what it keeps
    # -- controllers a profile adds, run after the registered ones (``controllers.loop.ADDONS``) --------
    addons: dict[str, Callable[..., Reconciler]] = field(default_factory=dict)
