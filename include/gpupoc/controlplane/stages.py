"""kwok's ``--config``: gpupoc's Stages (``kwok_stages.yaml``: nodes initialised and heart-beating, pods that
run, end after their run time with their exit code or OOMKilled, fail to pull a missing image, or hang) and a
``ClusterLogs`` default so ``pods/log`` of a pod without its own ``Logs`` object answers empty, as a container
that printed nothing does."""

from __future__ import annotations

from pathlib import Path

import yaml

from gpupoc.podspec import labels as L

STAGES_FILE = Path(__file__).with_name("kwok_stages.yaml")
# the annotations the stages read, as the pod builder writes them
STAGE_ANNOTATIONS = (L.VIRTUAL_END, L.VIRTUAL_RUN, L.VIRTUAL_EXIT)


def stage_documents() -> list[dict]:
    """Every Stage, in file order."""
    return [d for d in yaml.safe_load_all(STAGES_FILE.read_text(encoding="utf-8")) if d]


def cluster_logs_default(empty_log: Path) -> dict:
    return {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "ClusterLogs",
            "metadata": {"name": "gpupoc-default-logs"},
            "spec": {"logs": [{"logsFile": str(empty_log), "follow": False}]}}


def kwok_config(pod_logs: Path) -> list[dict]:
    """The config's documents; ``pod_logs/empty.log`` is the default log (made by ``write_kwok_config``)."""
    return [*stage_documents(), cluster_logs_default(pod_logs / "empty.log")]


def write_kwok_config(path: Path, pod_logs: Path) -> Path:
    pod_logs.mkdir(parents=True, exist_ok=True)
    (pod_logs / "empty.log").touch()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump_all(kwok_config(pod_logs), sort_keys=False), encoding="utf-8")
    return path
