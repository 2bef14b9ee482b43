"""How many GPUs a pod still holds, seen two ways: the API's allocation and the GPUs' own metrics.

The API view counts a pod's GPU requests while it is bound and not terminal (what the scheduler believes is
allocated). dcgm-exporter labels each GPU with the pod holding it, which shows GPUs a failed pod never gave
back even when the API says it is done. A probe returns None when its source cannot answer.
"""

from __future__ import annotations

import re
import urllib.error
import urllib.request
from typing import Callable

from gpupoc.pipeline.k8s import KubeCaller, holds_gpus, pod_gpus

GpuProbe = Callable[[str, str], "int | None"]  # (namespace, pod) -> GPUs held
SAMPLE = re.compile(r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)")
LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')
HOLDER_METRIC = "DCGM_FI_DEV_GPU_UTIL"


def api_probe(admin: KubeCaller) -> GpuProbe:
    """GPUs the API counts as allocated to the pod (0 once it is gone or terminal)."""
    def probe(namespace: str, pod: str) -> int | None:
        r = admin.call("GET", f"/api/v1/namespaces/{namespace}/pods/{pod}")
        if r.status == 404:
            return 0
        if not r.ok or not isinstance(r.body, dict):
            return None
        return pod_gpus(r.body) if holds_gpus(r.body) else 0
    return probe


def node_allocated(admin: KubeCaller) -> dict[str, int] | None:
    """GPUs allocated per node: the sum of bound, non-terminal pods' GPU requests."""
    r = admin.call("GET", "/api/v1/pods")
    if not r.ok:
        return None
    out: dict[str, int] = {}
    for p in (r.body or {}).get("items") or []:
        if holds_gpus(p):
            node = p["spec"]["nodeName"]
            out[node] = out.get(node, 0) + pod_gpus(p)
    return out


def parse_exposition(text: str, metric: str) -> list[dict[str, str]]:
    """Label sets of every sample of ``metric`` in Prometheus text format."""
    out = []
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        m = SAMPLE.match(line)
        if m and m["name"] == metric:
            out.append({k: v.replace('\\"', '"').replace("\\\\", "\\") for k, v in LABEL.findall(m["labels"] or "")})
    return out


def holders(text: str) -> dict[tuple[str, str], set[str]]:
    """(namespace, pod) -> GPU UUIDs it holds, from dcgm-exporter text (``exported_*`` labels win)."""
    out: dict[tuple[str, str], set[str]] = {}
    for labels in parse_exposition(text, HOLDER_METRIC):
        ns = labels.get("exported_namespace") or labels.get("namespace") or ""
        pod = labels.get("exported_pod") or labels.get("pod") or ""
        if pod:
            out.setdefault((ns, pod), set()).add(labels.get("UUID") or labels.get("uuid") or labels.get("gpu", ""))
    return out


def dcgm_probe(fetch: Callable[[], str]) -> GpuProbe:
    """GPUs dcgm-exporter attributes to the pod; ``fetch`` returns the exporter's text (None if it fails)."""
    def probe(namespace: str, pod: str) -> int | None:
        try:
            text = fetch()
        except (OSError, urllib.error.URLError):
            return None
        return len(holders(text).get((namespace, pod), ()))
    return probe


def url_fetcher(url: str, timeout: float = 5.0) -> Callable[[], str]:
    """Fetch an exporter page (the simulated cluster serves dcgm text at ``<url>/metrics``)."""
    def fetch() -> str:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return resp.read().decode("utf-8", "replace")
    return fetch


def prometheus_probe(prom) -> GpuProbe:
    """GPUs attributed to the pod by the latest dcgm samples in Prometheus (either label spelling)."""
    from gpupoc.exceptions import SourceUnavailable
    from gpupoc.monitoring.promclient import as_client

    client = as_client(prom)

    def probe(namespace: str, pod: str) -> int | None:
        expr = (f'count(({HOLDER_METRIC}{{namespace="{namespace}",pod="{pod}"}}) or '
                f'({HOLDER_METRIC}{{exported_namespace="{namespace}",exported_pod="{pod}"}}))')
        try:
            res = client.query(expr)
        except SourceUnavailable:
            return None
        return int(float(res[0]["value"][1])) if res else 0
    return probe
