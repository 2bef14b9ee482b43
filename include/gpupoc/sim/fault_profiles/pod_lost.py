"""``pod-lost``: the platform loses one running pod and keeps no record of it.

Once per cluster, the first bare pod (no owner) asking for GPUs whose containers have run for
``RUNNING_SECONDS`` (the first by namespace and name when several have) is taken out of the store as if its
object had been lost: no delete request (so no audit record), no event, no last status. Every read answers
404 from then on; the kubelet, the scheduler and the quota usage let it go as for any object that vanished
(they follow the store). A platform's own controllers (ReplicaSets, Jobs) are spared: their pods are replaced.
The fault adds ``PodLoss`` to the controllers the loop runs (``reactors.addons``, after ``controllers.loop.ADDONS``).
"""

from __future__ import annotations

import logging
from datetime import datetime

from gpupoc.kube.resources import GPU
from gpupoc.sim import clock, quota
from gpupoc.sim.cluster import ClusterState

log = logging.getLogger(__name__)

RUNNING_SECONDS = 1.0  # a pod is lost once it has run this long: the pipeline saw it running


def running_since(pod: dict) -> datetime | None:
    """When the pod's first container started running (None: not running)."""
    st = pod.get("status") or {}
    if st.get("phase") != "Running" or (pod.get("metadata") or {}).get("deletionTimestamp"):
        return None
    for c in st.get("containerStatuses") or []:
        started = ((c.get("state") or {}).get("running") or {}).get("startedAt")
        if started:
            return clock.parse(started)
    return None


def is_target(pod: dict, now: datetime, running_s: float = RUNNING_SECONDS) -> bool:
    """A bare pod asking for GPUs that has run for ``running_s``."""
    meta = pod.get("metadata") or {}
    since = running_since(pod)
    asks = quota.pod_requests(pod)
    gpus = max(asks.get(f"requests.{GPU}", 0), asks.get(f"limits.{GPU}", 0))
    return (not meta.get("ownerReferences") and gpus > 0 and since is not None
            and (now - since).total_seconds() >= running_s)


class PodLoss:
    """Loses one running pod, once (a controller the fault adds, ``reactors.addons``)."""

    def __init__(self, state: ClusterState):
        self.state = state
        self.lost: tuple[str, str] | None = None  # (namespace, name) once lost

    def run_pass(self) -> None:
        if self.lost is not None:
            return
        now = clock.now()
        targets = sorted((p["metadata"]["namespace"], p["metadata"]["name"]) for p in self.state.store.list("pods")
                         if is_target(p, now))
        if not targets:
            return
        self.lost = targets[0]
        self.state.store.delete("pods", *self.lost)  # the store only: no request, no audit line, no event
        log.warning("fault pod-lost: pod %s/%s lost without a record", *self.lost)


def install(state: ClusterState) -> None:
    state.reactors.addons["pod-loss"] = PodLoss
