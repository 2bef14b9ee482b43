"""kube-scheduler's filters and free-GPU buckets lent to the gang schedulers (a mixin of ``Scheduler``, the
``Placer`` port of ``sim.ports``).

Volcano and KAI place a gang pod by pod through the same filters and bin-packing as kube-scheduler:
``reserve`` holds a node's GPUs without binding, ``unreserve`` gives them back, ``commit`` binds in the gang
scheduler's words; ``adjust`` counts GPUs a reclaim would free until the next ``refresh``.
"""

from __future__ import annotations

from collections import Counter

from gpupoc.sim.controllers import scheduling as S
from gpupoc.sim.controllers.wording import Wording

Key = tuple[str, str]


class PlacementMixin:
    """The placement half of the ``Placer`` port; uses the scheduler's indexes (``_free``, ``_info``, ...)."""

    def refresh(self) -> int:
        """Bring node classes and free-GPU buckets up to date; returns the cluster's free GPUs."""
        if self._nodes_dirty:
            self._rebuild_nodes()
        return self._sync_free()

    @property
    def node_count(self) -> int:
        return self._node_count

    def reserve(self, key: Key, pod: dict) -> str | None:
        """Find a node for ``pod`` (filters, free GPUs, pod slots) and hold its GPUs there without binding;
        returns the node, or None when it fits nowhere. Undo with ``unreserve``, make it real with ``commit``."""
        sig, specific, need = self._info(pod)
        node = self._find_node(pod, key, sig, specific, need, S.priority_of(pod), None)
        if node is not None:
            self._move(node, self._free[node] - need)
        return node

    def unreserve(self, node: str, pod: dict) -> None:
        """Give back the GPUs ``reserve`` held on ``node`` for ``pod``."""
        self._move(node, self._free[node] + self._info(pod)[2])

    def commit(self, key: Key, pod: dict, node: str, wording: Wording) -> None:
        """Bind a pod reserved on ``node``, with ``wording``'s Scheduled event."""
        self._bind(key, pod, node, wording)

    def shape_of(self, pod: dict) -> tuple:
        """(placement rules, node-specific, GPUs): pods alike here fit the same nodes."""
        return self._info(pod)

    def fit_counts(self, key: Key, pod: dict) -> Counter:
        """Why ``pod`` fits nowhere now: nodes per filter reason (the FitError histogram)."""
        sig, specific, need = self._info(pod)
        return self._reasons(pod, key, sig, specific, need, S.priority_of(pod)).counts()

    def adjust(self, node: str, delta: int) -> None:
        """Count ``delta`` more (or fewer) free GPUs on ``node`` until the next ``refresh`` (a reclaim
        simulates the GPUs its victims would free)."""
        self._move(node, self._free[node] + delta)
