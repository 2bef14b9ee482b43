"""Container logs of pods on KWOK nodes: the workload's lines, written in the CRI format a kubelet keeps
(``2026-12-06T05:16:35.100000000Z stdout F text``) under ``<root>/pod-logs/<namespace>/<pod>/<container>.log``,
and a kwok ``Logs`` object naming the files, so ``kubectl logs`` (``pods/log``) reads them through the API
server and kwok's kubelet API. A pod without one answers an empty log, as a container that printed nothing."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Iterable, Protocol

import yaml

from gpupoc.controlplane.layout import Layout


class Plane(Protocol):
    """What writing a pod's log needs of a ``ControlPlane``."""

    layout: Layout

    def run_kubectl(self, *args: str, input: str | None = None, timeout: float = 60, check: bool = True): ...


def logs_crd() -> dict:
    """The CustomResourceDefinition of kwok's namespaced ``Logs`` (kwok reads them with ``--enable-crds=Logs``
    but does not define them): ``spec.logs[]`` of ``containers``, ``logsFile``, ``previousLogsFile``, ``follow``."""
    log = {"type": "object", "properties": {"containers": {"type": "array", "items": {"type": "string"}},
                                            "logsFile": {"type": "string"}, "previousLogsFile": {"type": "string"},
                                            "follow": {"type": "boolean"}}}
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "required": ["logs"],
                 "properties": {"logs": {"type": "array", "items": log}}},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "logs.kwok.x-k8s.io"},
            "spec": {"group": "kwok.x-k8s.io", "scope": "Namespaced",
                     "names": {"kind": "Logs", "listKind": "LogsList", "plural": "logs", "singular": "logs"},
                     "versions": [{"name": "v1alpha1", "served": True, "storage": True,
                                   "subresources": {"status": {}}, "schema": {"openAPIV3Schema": schema}}]}}


def cri_line(at: dt.datetime, text: str, stream: str = "stdout") -> str:
    """One full (``F``) CRI log line; ``at`` in UTC with nanoseconds."""
    at = at.astimezone(dt.timezone.utc)
    return f"{at.strftime('%Y-%m-%dT%H:%M:%S')}.{at.microsecond * 1000:09d}Z {stream} F {text}\n"


def logs_object(namespace: str, pod: str, files: dict[str, Path]) -> dict:
    """kwok's ``Logs`` for one pod: container name -> its log file."""
    return {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "Logs",
            "metadata": {"name": pod, "namespace": namespace},
            "spec": {"logs": [{"containers": [c], "logsFile": str(f), "follow": True}
                              for c, f in sorted(files.items())]}}


def append_log(directory: Path, namespace: str, pod: str, lines: Iterable[str], *, container: str = "base",
               at: dt.datetime | None = None, stream: str = "stdout") -> Path:
    """Append the lines to the container's log file (one timestamp each, ``at`` or now); its path."""
    path = directory / namespace / pod / f"{container}.log"
    path.parent.mkdir(parents=True, exist_ok=True)
    when = at or dt.datetime.now(dt.timezone.utc)
    with open(path, "a", encoding="utf-8") as fh:
        for i, line in enumerate(lines):
            fh.write(cri_line(when + dt.timedelta(microseconds=i), line.rstrip("\n"), stream))
    return path


def write_pod_log(cp: Plane, namespace: str, pod: str, lines: Iterable[str], *, container: str = "base",
                  at: dt.datetime | None = None) -> Path:
    """Append the workload's lines to its log and make kwok serve every container log of the pod."""
    path = append_log(cp.layout.pod_logs, namespace, pod, lines, container=container, at=at)
    files = {f.stem: f for f in path.parent.glob("*.log")}
    cp.run_kubectl("apply", "-f", "-", input=yaml.safe_dump(logs_object(namespace, pod, files)))
    return path
