"""Prometheus answers with DCGM and kube-state-metrics series for every pool node; Alertmanager routes to a
webhook receiver that answers, and Prometheus sends to Alertmanager with the POC's rules loaded."""

from __future__ import annotations

import json
import ssl
import urllib.error
import urllib.request
from urllib.parse import urlsplit

import yaml

from gpupoc.exceptions import SourceUnavailable
from gpupoc.plan.classes import TestClass
from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.model import CheckResult, failed, ok
from gpupoc.preflight.pool_checks import pool_nodes
from gpupoc.preflight.registry import check

DCGM = "DCGM_FI_DEV_GPU_UTIL"
KSM = 'kube_node_status_capacity{resource="nvidia_com_gpu"}'
KSM_DRA = "kube_node_labels"  # DRA GPUs are no node capacity: any series of the node's
RULE_GROUP = "gpupoc-gpu-platform"
PROM_FIX = ("set evidence_sources.prometheus_url (or the Airflow connection gpupoc_prometheus) to the Prometheus "
            "that scrapes the cluster")


def _nodes_by_pool(ctx: PreflightContext) -> dict[str, list[str]]:
    return {p.name: [n["metadata"]["name"] for n in pool_nodes(ctx.nodes(), p)] for p in ctx.plan.pools}


def _labelled(prom, expr: str, *labels: str) -> set[str]:
    out = set()
    for s in prom.query(expr):
        for label in labels:
            if s["metric"].get(label):
                out.add(s["metric"][label])
    return out


@check("prometheus.series", "Prometheus has DCGM and kube-state-metrics series for every pool node",
       classes=(TestClass.UTILIZATION.value, TestClass.FAULT_RECOVERY.value))
def series(ctx: PreflightContext) -> list[CheckResult]:
    if not ctx.sources.prometheus:
        return [failed("prometheus.series", "", "no Prometheus configured", PROM_FIX)]
    prom = ctx.sources.prometheus_client(timeout=ctx.plan.cluster.preflight.api_timeout_seconds)
    dcgm = _labelled(prom, DCGM, "Hostname", "hostname", "node")
    expr = KSM_DRA if ctx.plan.platform.options.dra else KSM
    ksm = _labelled(prom, expr, "node")
    out = []
    for pool, nodes in _nodes_by_pool(ctx).items():
        no_dcgm = [n for n in nodes if n not in dcgm]
        no_ksm = [n for n in nodes if n not in ksm]
        where = f"{prom.url}"
        if no_dcgm:
            out.append(failed("prometheus.series", pool, f"no {DCGM} series in {where} for {', '.join(no_dcgm)}",
                              "install dcgm-exporter on the GPU nodes (NVIDIA GPU Operator or its helm chart) and "
                              "let this Prometheus scrape it (a ServiceMonitor)"))
        if no_ksm:
            out.append(failed("prometheus.series", pool, f"no kube-state-metrics {expr} series in {where} for "
                              f"{', '.join(no_ksm)}", "install kube-state-metrics and let this Prometheus scrape it"))
        if not no_dcgm and not no_ksm:
            out.append(ok("prometheus.series", pool, f"{DCGM} and kube-state-metrics series for {len(nodes)} "
                          "node(s)"))
    return out


def _get_json(url: str, timeout: float) -> dict:
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            return json.loads(resp.read() or b"{}")
    except (urllib.error.URLError, OSError, ValueError) as exc:
        raise SourceUnavailable(url, f"unreachable or not JSON: {getattr(exc, 'reason', exc)}",
                                "set evidence_sources.alertmanager_url (or the Airflow connection "
                                "gpupoc_alertmanager) to a reachable Alertmanager") from None


def webhook_urls(config_text: str) -> list[str]:
    """The webhook URLs of the receiver the top-level route sends to."""
    cfg = yaml.safe_load(config_text or "") or {}
    name = (cfg.get("route") or {}).get("receiver")
    rec = next((r for r in cfg.get("receivers") or [] if r.get("name") == name), {})
    return [w["url"] for w in rec.get("webhook_configs") or [] if w.get("url")]


def answers(url: str, timeout: float) -> bool:
    """Whether anything listens at ``url`` (any HTTP answer counts: a webhook may refuse a GET, or this request
    without its token). Only reachability is asked: Alertmanager checks the receiver's certificate with the CA
    of its own ``http_config``, which this machine need not hold."""
    ctx = None
    if url.startswith("https"):
        ctx = ssl.create_default_context()
        ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE  # reachability only, see above
    try:
        urllib.request.urlopen(url, timeout=timeout, context=ctx)
        return True
    except urllib.error.HTTPError:
        return True
    except (urllib.error.URLError, OSError):
        return False


@check("alerting", "Alertmanager routes to a webhook receiver that answers, and Prometheus sends to it",
       classes=(TestClass.FAULT_RECOVERY.value,))
def alerting(ctx: PreflightContext) -> list[CheckResult]:
    timeout = ctx.plan.cluster.preflight.api_timeout_seconds
    am = ctx.sources.alertmanager
    if not am:
        return [failed("alerting", "", "no Alertmanager configured", "set evidence_sources.alertmanager_url (or "
                       "the Airflow connection gpupoc_alertmanager)")]
    status = _get_json(f"{am.rstrip('/')}/api/v2/status", timeout)
    hooks = webhook_urls((status.get("config") or {}).get("original", ""))
    out = []
    if not hooks:
        out.append(failed("alerting", am, "the route's receiver has no webhook", "route the alerts to a webhook "
                          "receiver (gpupoc's: python -m gpupoc.monitoring.receiver) with send_resolved: true"))
    else:
        dead = [h for h in hooks if not answers(h, timeout)]
        out.append(failed("alerting", am, f"webhook receiver {', '.join(dead)} does not answer", "start the "
                          "receiver the route names, or fix its URL") if dead else
                   ok("alerting", am, f"routes to {', '.join(hooks)}, which answers"))
    if ctx.sources.prometheus:
        out += _prometheus_side(ctx, am, timeout)
    return out


def _prometheus_side(ctx: PreflightContext, am: str, timeout: float) -> list[CheckResult]:
    prom = ctx.sources.prometheus.rstrip("/")
    active = (_get_json(f"{prom}/api/v1/alertmanagers", timeout).get("data") or {}).get("activeAlertmanagers") or []
    host = urlsplit(am).netloc
    groups = (_get_json(f"{prom}/api/v1/rules", timeout).get("data") or {}).get("groups") or []
    out = []
    if not any(urlsplit(a.get("url", "")).netloc == host for a in active):
        out.append(failed("alerting", prom, f"Prometheus does not send to {am} (active: "
                          f"{[a.get('url') for a in active] or 'none'})", "add it under alerting.alertmanagers"))
    if not any(g.get("name") == RULE_GROUP for g in groups):
        out.append(failed("alerting", prom, f"rule group {RULE_GROUP} is not loaded", "install the rules: gpupoc "
                          "cluster manifests --monitoring | kubectl apply -f - (or --out DIR's alert-rules.yml)"))
    if not out:
        out.append(ok("alerting", prom, f"sends to {am}; rule group {RULE_GROUP} loaded"))
    return out
