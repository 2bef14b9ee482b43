"""What the controllers ask of a pod's state: has it ended, is it being deleted, is it Ready
(kubernetes ``pkg/controller/controller_utils.go`` ``IsPodActive``, ``pkg/api/v1/pod/util.go`` ``IsPodReady``)."""

from __future__ import annotations

TERMINAL = ("Succeeded", "Failed")


def is_ready(pod: dict) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True"
               for c in (pod.get("status") or {}).get("conditions") or [])


def is_active(pod: dict) -> bool:
    """Not ended and not being deleted (``controller.IsPodActive``)."""
    return (pod.get("status") or {}).get("phase") not in TERMINAL and not pod["metadata"].get("deletionTimestamp")
