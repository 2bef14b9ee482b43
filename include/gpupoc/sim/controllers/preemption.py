"""kube-scheduler's DefaultPreemption post-filter for the simulated scheduler (a mixin of ``Scheduler``).

When a pod fits nowhere, lower-priority pods are chosen as victims on the node where that matters least
(``scheduling.select_victims``/``best_choice``), the preemptor is nominated to that node, and each victim is
stopped in its platform's words (``disruption.preempt``). Nothing is preempted without the priority queue
(``reactors.priority_queue``); a pod ``reactors.victim_whatever_priority`` picks is a victim of any preemptor.
"""

from __future__ import annotations

from collections import Counter

from gpupoc.sim.controllers import disruption
from gpupoc.sim.controllers import scheduling as S
from gpupoc.sim.controllers.scheduling import Failure

Key = tuple[str, str]


class PreemptionMixin:
    """The post-filter; uses the scheduler's indexes (``_node_pods``, ``_prio_of``, ``_free``, ...)."""

    def _preempt(self, key: Key, pod: dict, need: int, prio: int, reasons: Failure) -> tuple[str | None, bool]:
        """DefaultPreemption post-filter: evict lower-priority pods where that makes room. Returns the
        post-filter message (None when disabled; the placement found when victims were chosen) and whether
        the pod was nominated to a node."""
        if not self.state.reactors.priority_queue:
            return None, False  # DefaultPreemption is off
        if not S.preempts(pod):
            return "preemption: " + S.NOT_ELIGIBLE_NEVER, False
        nominated = pod.get("status", {}).get("nominatedNodeName")
        if nominated and self._terminating_victims(nominated, prio):
            return "preemption: " + S.NOT_ELIGIBLE_TERMINATING, False
        if reasons.post is not None:
            return reasons.post, False
        post: Counter = Counter({S.PREEMPTION_NOT_HELPFUL: sum(reasons.unresolvable.values())})
        resolvable = {n for names in reasons.resolvable.values() for n in names}
        choices: list[S.NodeChoice] = []
        anyone = self.state.reactors.victim_whatever_priority is not None  # some pods are victims of anyone
        if not anyone and not any(p < prio and c > 0 for p, c in self._prio_count.items()):
            post[S.NO_VICTIMS] += len(resolvable)  # no lower-priority pod runs anywhere
        else:
            for name in sorted(resolvable):
                room = self._cap.get(name, 110) - len(self._node_pods.get(name, ()))
                picked = S.select_victims(need, self._free[name], room, self._candidates(name, prio))
                if isinstance(picked, str):
                    post[picked] += 1
                else:
                    choices.append(S.NodeChoice(name, picked))
        choice = S.best_choice(choices)
        if choice is None:
            message = S.preemption_message(self._node_count, post)
            reasons.post = message  # nothing to preempt stays true for the rest of the pass
            return message, False
        self._evict(pod, choice)
        pod["status"]["nominatedNodeName"] = choice.node
        self._nominated[key] = (choice.node, prio, need)
        return S.placement_message(choice.node, len(choice.victims)), True

    def _candidates(self, node: str, prio: int) -> list[S.Victim]:
        anyones = self.state.reactors.victim_whatever_priority  # None: only lower priorities are victims
        out = []
        for k in self._node_pods.get(node, ()):
            if self._prio_of.get(k, 0) >= prio and anyones is None:
                continue
            victim = self.store.get("pods", k[0], k[1])
            if victim is None or victim["metadata"].get("deletionTimestamp"):
                continue
            if self._prio_of.get(k, 0) >= prio and not anyones(victim):
                continue
            out.append(S.Victim(k, self._prio_of[k], S.gpu_request(victim),
                                victim.get("status", {}).get("startTime") or ""))
        return out

    def _terminating_victims(self, node: str, prio: int) -> bool:
        for k in self._node_pods.get(node, ()):
            if self._prio_of.get(k, 0) >= prio:
                continue
            if k in self._victims:
                return True
        return False

    def _evict(self, preemptor: dict, choice: S.NodeChoice) -> None:
        for v in choice.victims:
            victim = self.store.get("pods", v.key[0], v.key[1])
            if victim is not None:
                self._victims.add(v.key)
                disruption.preempt(self.state, victim, preemptor, choice.node, self.wording_of(preemptor))
