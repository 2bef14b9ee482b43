"""Label spellings across exporter versions and scrape setups, resolved to one column name each.

dcgm-exporter writes ``Hostname`` (``hostname`` in newer releases); behind a ServiceMonitor with
``honorLabels: false`` the workload's ``namespace``/``pod``/``container`` arrive as ``exported_*`` while the
plain names then describe the exporter's own pod, so ``exported_*`` wins when present.
"""

from __future__ import annotations

from typing import Mapping

ALIASES: dict[str, tuple[str, ...]] = {
    "namespace": ("exported_namespace", "namespace"),
    "pod": ("exported_pod", "pod"),
    "container": ("exported_container", "container"),
    "hostname": ("Hostname", "hostname", "exported_Hostname", "exported_hostname"),
    "uuid": ("UUID", "uuid"),
    "gpu": ("gpu",),
    "model_name": ("modelName", "model_name"),
    "node": ("exported_node", "node"),
    "task_type": ("label_gpupoc_io_task_type",),
    "tenant": ("label_gpupoc_io_tenant",),
    "queue": ("label_kueue_x_k8s_io_queue_name",),
    "test_class": ("label_gpupoc_io_test_class",),
    "run_id": ("label_gpupoc_io_run_id",),
    "pool": ("label_gpupoc_io_pool",),
    "gpu_product": ("label_nvidia_com_gpu_product",),
}


def pick(metric: Mapping[str, str], column: str) -> str:
    """The value of ``column`` under whichever spelling ``metric`` uses ("" when absent)."""
    for name in ALIASES.get(column, (column,)):
        value = metric.get(name)
        if value:
            return value
    return ""


EXPORTER_POD_MARK = "dcgm-exporter"  # behind a ServiceMonitor, a free GPU's `pod` is the exporter's own pod


def normalize(metric: Mapping[str, str], columns: tuple[str, ...]) -> dict[str, str]:
    """One value per wanted column. A GPU whose only ``pod`` label names the exporter pod is free: its
    namespace, pod and container come out empty."""
    row = {c: pick(metric, c) for c in columns}
    if not metric.get("exported_pod") and EXPORTER_POD_MARK in metric.get("pod", ""):
        for c in ("namespace", "pod", "container"):
            if c in row:
                row[c] = ""
    return row
