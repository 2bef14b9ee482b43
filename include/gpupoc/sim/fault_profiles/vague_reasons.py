"""``vague-reasons``: as ``reasons-opaque``, except that every unschedulable pod is answered with one
text that names nothing: "Pod is pending." (its Chinese text under the ``zh-wording`` behaviour)."""

from __future__ import annotations

from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.controllers import zh_wording
from gpupoc.sim.controllers.wording import VAGUE

def install(state: ClusterState) -> None:
    text = zh_wording.VAGUE if Behaviour.ZH_WORDING in state.behaviours else VAGUE
    state.reactors.reasons_shown = False
    state.reactors.opaque_fit_error = lambda num_nodes: text
