"""How a workload's pod ends, as annotations a node without containers plays (the real control plane's KWOK
Stages, ``gpupoc/controlplane/kwok_stages.yaml``): its run time, its exit code, OOMKilled, a missing image's
failed pull, or a hang. They come from the catalogue fields the simulated kubelet plays: ``duration_seconds``,
``expected_exit_code`` (None: never ends by itself) and ``expected_reason``."""

from __future__ import annotations

from gpupoc.plan.model import Workload, WorkloadKind
from gpupoc.podspec import labels as L

IMAGE_PULL_REASONS = ("ErrImagePull", "ImagePullBackOff")
OOM_EXIT = 137


def virtual_end(workload: Workload) -> str | None:
    """``exit``, ``oom``, ``image-pull``, ``hang``; None for a service replica (runs until deleted)."""
    if workload.kind == WorkloadKind.SERVICE:
        return None
    if workload.expected_reason in IMAGE_PULL_REASONS:
        return "image-pull"
    if workload.expected_reason == "OOMKilled":
        return "oom"
    if workload.expected_exit_code is None:
        return "hang"
    return "exit"


def go_duration(seconds: float) -> str:
    """``15`` -> ``15s``; ``0.5`` -> ``500ms`` (Go's time.ParseDuration reads both)."""
    return f"{int(seconds)}s" if float(seconds).is_integer() else f"{round(seconds * 1000)}ms"


def lifecycle_annotations(workload: Workload) -> dict[str, str]:
    """The ``gpupoc.io/virtual-*`` annotations of ``workload``'s pods (empty for a service replica)."""
    end = virtual_end(workload)
    if end is None:
        return {}
    out = {L.VIRTUAL_END: end, L.VIRTUAL_RUN: go_duration(workload.duration_seconds)}
    if end == "exit":
        out[L.VIRTUAL_EXIT] = str(workload.expected_exit_code)
    elif end == "oom":
        out[L.VIRTUAL_EXIT] = str(OOM_EXIT)
    return out
