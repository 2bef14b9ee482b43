"""Pod status as the kubelet reports it: container states, conditions, phase, QoS, quantities and ids."""

from __future__ import annotations

import hashlib
import re
import secrets

from gpupoc.kube.resources import GPU
from gpupoc.sim import clock

TERMINAL = ("Succeeded", "Failed")
KUBELET_CONDITIONS = ("PodReadyToStartContainers", "Initialized", "Ready", "ContainersReady")
_RANK = {t: i for i, t in enumerate(KUBELET_CONDITIONS + ("PodScheduled",))}

_QUANTITY = re.compile(r"^([+-]?[0-9.]+(?:[eE][+-]?[0-9]+)?)([a-zA-Z]*)$")
_SUFFIX = {
    "": 1, "m": 1e-3, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15, "E": 1e18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}


def parse_quantity(value: object) -> float:
    """A Kubernetes quantity (``150Mi``, ``1.5Gi``, ``2G``, ``500m``, ``1e9``, ``1024``) as a plain number."""
    text = str(value).strip()
    m = _QUANTITY.match(text)
    if not m or m.group(2) not in _SUFFIX:
        raise ValueError(f"quantity {text!r}: expected a number with an optional suffix "
                         f"({', '.join(s for s in _SUFFIX if s)}), e.g. 512Mi")
    return float(m.group(1)) * _SUFFIX[m.group(2)]


def memory_limit_bytes(container: dict) -> int | None:
    """``resources.limits.memory`` in bytes, None when unset or unparsable."""
    raw = ((container.get("resources") or {}).get("limits") or {}).get("memory")
    if raw in (None, ""):
        return None
    try:
        return int(parse_quantity(raw))
    except ValueError:
        return None


def container_gpu_count(container: dict) -> int:
    res = container.get("resources") or {}
    raw = (res.get("limits") or {}).get(GPU, (res.get("requests") or {}).get(GPU, 0))
    try:
        return int(parse_quantity(raw))
    except ValueError:
        return 0


def qos_class(pod: dict) -> str:
    """Guaranteed (every container limits cpu and memory, requests equal), Burstable, or BestEffort."""
    containers = pod.get("spec", {}).get("containers") or []
    any_set = False
    guaranteed = bool(containers)
    for c in containers:
        res = c.get("resources") or {}
        limits = {k: v for k, v in (res.get("limits") or {}).items() if k in ("cpu", "memory")}
        requests = {k: v for k, v in (res.get("requests") or {}).items() if k in ("cpu", "memory")}
        any_set = any_set or bool(limits or requests)
        if set(limits) != {"cpu", "memory"}:
            guaranteed = False
            continue
        for k, v in requests.items():
            if parse_quantity(v) != parse_quantity(limits[k]):
                guaranteed = False
    if guaranteed:
        return "Guaranteed"
    return "Burstable" if any_set else "BestEffort"


def normalized_image(image: str) -> str:
    """``busybox`` -> ``docker.io/library/busybox:latest`` (how containerd names it)."""
    name = image.split("@", 1)[0]
    first = name.split("/", 1)[0]
    if "/" not in name:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    if ":" not in name.rsplit("/", 1)[-1]:
        name += ":latest"
    return name


def image_id(image: str) -> str:
    """A stable ``repo@sha256:`` digest for a catalogue image."""
    repo = normalized_image(image).rsplit(":", 1)[0]
    return f"{repo}@sha256:{hashlib.sha256(image.encode()).hexdigest()}"


def new_container_id() -> str:
    return "containerd://" + secrets.token_hex(32)


def waiting(reason: str, message: str | None = None) -> dict:
    w = {"reason": reason}
    if message:
        w["message"] = message
    return {"waiting": w}


def running(started_at: str) -> dict:
    return {"running": {"startedAt": started_at}}


def terminated(exit_code: int, reason: str, started_at: str | None, container_id: str | None,
               message: str | None = None, finished_at: str | None = None) -> dict:
    """A terminated state; ``finishedAt`` is always wall-clock (the operator drops logs otherwise)."""
    t = {"exitCode": exit_code, "reason": reason, "startedAt": started_at,
         "finishedAt": finished_at or clock.rfc3339()}
    if container_id:
        t["containerID"] = container_id
    if message:
        t["message"] = message
    return {"terminated": t}


def exit_reason(exit_code: int, oom: bool) -> str:
    if oom:
        return "OOMKilled"
    return "Completed" if exit_code == 0 else "Error"


def fallback_message(lines: list[str], max_lines: int = 80, max_bytes: int = 2048) -> str | None:
    """terminationMessagePolicy FallbackToLogsOnError: the end of the log (80 lines or 2 KiB)."""
    text = "\n".join(lines[-max_lines:])
    data = text.encode()[-max_bytes:]
    return data.decode(errors="replace") or None


def set_condition(status: dict, type_: str, value: str, reason: str | None = None,
                  message: str | None = None) -> None:
    """Set a condition, keeping lastTransitionTime while its status does not change."""
    conds = status.setdefault("conditions", [])
    current = next((c for c in conds if c.get("type") == type_), None)
    new = {"type": type_, "status": value, "lastProbeTime": None, "lastTransitionTime": clock.rfc3339()}
    if reason:
        new["reason"] = reason
    if message:
        new["message"] = message
    if current is None:
        conds.append(new)
        return
    if current.get("status") == value:
        new["lastTransitionTime"] = current.get("lastTransitionTime") or new["lastTransitionTime"]
    conds[conds.index(current)] = new


def order_conditions(status: dict) -> None:
    """Kubelet order: its own conditions first, then PodScheduled, then the rest (DisruptionTarget...)."""
    status["conditions"] = sorted(status.get("conditions") or [], key=lambda c: _RANK.get(c.get("type"), 99))


def readiness_conditions(status: dict, phase: str, unready: list[str], sandbox: bool) -> None:
    """PodReadyToStartContainers, Initialized, Ready and ContainersReady for a phase and unready containers."""
    set_condition(status, "PodReadyToStartContainers", "True" if sandbox else "False")
    set_condition(status, "Initialized", "True")
    if phase == "Succeeded":
        reason, message = "PodCompleted", None
    elif phase == "Failed":
        reason, message = "PodFailed", None
    elif unready:
        reason, message = "ContainersNotReady", f"containers with unready status: [{' '.join(unready)}]"
    else:
        reason = message = None
    ready = "True" if reason is None else "False"
    set_condition(status, "Ready", ready, reason, message)
    set_condition(status, "ContainersReady", ready, reason, message)
    if not any(c.get("type") == "PodScheduled" for c in status["conditions"]):
        set_condition(status, "PodScheduled", "True")
    order_conditions(status)
