"""Releasing the wave: patches that lift only the pipeline's scheduling gate.

Other gates (Kueue's ``kueue.x-k8s.io/admission``) stay: the platform still decides when the pod runs.
"""

from __future__ import annotations

from typing import Any, Iterable

from gpupoc.common.constants import PIPELINE_GATE


def release_gate_patch(gate: str = PIPELINE_GATE) -> dict:
    """Strategic-merge patch (``application/strategic-merge-patch+json``) deleting only ``gate``.

    ``spec.schedulingGates`` merges on ``name``, so the ``$patch: delete`` directive removes that one entry.
    """
    return {"spec": {"schedulingGates": [{"$patch": "delete", "name": gate}]}}


def gate_names(gates: Iterable[Any] | None) -> list[str]:
    """Names of a pod's gates given as API dicts, ``V1PodSchedulingGate`` models or plain names."""
    out = []
    for g in gates or []:
        if isinstance(g, str):
            out.append(g)
        elif isinstance(g, dict):
            out.append(g.get("name", ""))
        else:
            out.append(getattr(g, "name", ""))
    return out


def release_gate_json_patch(current_gates: Iterable[Any] | None, gate: str = PIPELINE_GATE) -> list[dict]:
    """JSON patch (``application/json-patch+json``) removing ``gate`` from the pod's current gates.

    Each remove is preceded by a ``test`` of the name at that index, so a pod whose gates changed since
    they were read is refused (422) instead of losing the wrong gate. Indices descend so each stays valid.
    Empty when the gate is not there (already released).
    """
    ops: list[dict] = []
    names = gate_names(current_gates)
    for i in sorted((i for i, n in enumerate(names) if n == gate), reverse=True):
        ops.append({"op": "test", "path": f"/spec/schedulingGates/{i}/name", "value": gate})
        ops.append({"op": "remove", "path": f"/spec/schedulingGates/{i}"})
    return ops


def is_gated(pod: Any, gate: str = PIPELINE_GATE) -> bool:
    """True while ``pod`` (API dict or V1Pod) still carries ``gate``."""
    if isinstance(pod, dict):
        gates = (pod.get("spec") or {}).get("schedulingGates")
    else:
        gates = getattr(getattr(pod, "spec", None), "scheduling_gates", None)
    return gate in gate_names(gates)
