"""Render the shipped monitoring templates (``monitoring/`` at the project root) into a stack's data dir."""

from __future__ import annotations

import os
import re
import urllib.parse
from pathlib import Path

import yaml

from gpupoc.exceptions import ConfigError

SIM_JOBS = ("dcgm-exporter", "kube-state-metrics")
_DURATION = re.compile(r"^(\d+(ms|s|m|h|d|w|y))+$")


def monitoring_dir() -> Path:
    """The project's monitoring configuration: ``$GPUPOC_MONITORING_DIR`` or ``<project>/monitoring``."""
    env = os.environ.get("GPUPOC_MONITORING_DIR")
    return Path(env) if env else Path(__file__).resolve().parents[3] / "monitoring"


def load_yaml(path: Path) -> dict:
    try:
        return yaml.safe_load(path.read_text()) or {}
    except OSError as exc:
        raise ConfigError(str(path), [f"cannot read: {exc.strerror}; set GPUPOC_MONITORING_DIR or --config-dir "
                                      "to the project's monitoring/ directory"]) from exc
    except yaml.YAMLError as exc:
        raise ConfigError(str(path), [f"invalid YAML: {exc}"]) from exc


def seconds(duration: str | float) -> float:
    """``"5s"``/``"1m"``/``2.5`` -> seconds."""
    if isinstance(duration, (int, float)):
        return float(duration)
    units = {"ms": 0.001, "s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800, "y": 31536000}
    total = 0.0
    for num, unit in re.findall(r"(\d+)(ms|s|m|h|d|w|y)", duration):
        total += int(num) * units[unit]
    return total


def duration(value: str | float) -> str:
    """A Prometheus duration string from seconds or a duration string (validated)."""
    if isinstance(value, (int, float)):
        ms = int(round(float(value) * 1000))
        return f"{ms // 1000}s" if ms % 1000 == 0 else f"{ms}ms"
    if not _DURATION.match(value):
        raise ConfigError("duration", [f"{value!r}: expected a Prometheus duration such as 5s, 30s, 2m"])
    return value


def sim_target(metrics_url: str) -> tuple[str, str]:
    """``http://127.0.0.1:8080`` -> (scheme, ``127.0.0.1:8080``)."""
    u = urllib.parse.urlsplit(metrics_url)
    if u.scheme not in ("http", "https") or not u.hostname:
        raise ConfigError("metrics url", [f"{metrics_url!r}: expected http(s)://host:port of the simulated cluster, "
                                          "or of gpupoc's exporter on a real cluster (--metrics-url)"])
    port = u.port or (443 if u.scheme == "https" else 80)
    return u.scheme, f"{u.hostname}:{port}"


def render_prometheus(template: Path, metrics_url: str, alertmanager_addr: str, rule_files: list[Path],
                      scrape_interval: str, evaluation_interval: str) -> dict:
    """The Prometheus config: the jobs of ``SIM_JOBS`` pointed at ``metrics_url`` (the simulated cluster, or
    gpupoc's exporter reading a real API server: both serve dcgm-exporter at ``/metrics`` and kube-state-metrics
    at ``/metrics/kube-state``), intervals, rules and Alertmanager set."""
    cfg = load_yaml(template)
    scheme, target = sim_target(metrics_url)
    g = cfg.setdefault("global", {})
    g["scrape_interval"] = duration(scrape_interval)
    g["scrape_timeout"] = duration(min(seconds(scrape_interval), 10.0))
    g["evaluation_interval"] = duration(evaluation_interval)
    cfg["rule_files"] = [str(p) for p in rule_files]
    cfg["alerting"] = {"alertmanagers": [{"static_configs": [{"targets": [alertmanager_addr]}]}]}
    jobs = {j.get("job_name"): j for j in cfg.get("scrape_configs") or []}
    missing = [j for j in SIM_JOBS if j not in jobs]
    if missing:
        raise ConfigError(str(template), [f"scrape_configs: job(s) {missing} missing; the collectors and rules "
                                          "expect jobs dcgm-exporter and kube-state-metrics"])
    for name in SIM_JOBS:
        job = jobs[name]
        job["scheme"] = scheme
        job["static_configs"] = [{"targets": [target]}]
        if scheme == "https":
            job["tls_config"] = {"insecure_skip_verify": True}
    return cfg


def render_alertmanager(template: Path, webhook_url: str, token_file: Path | None = None,
                        ca_file: Path | None = None) -> dict:
    """The Alertmanager config with every webhook pointed at the project's receiver, sending its bearer token
    (read from ``token_file``: the token itself stays out of the config) and trusting its CA (``ca_file``)."""
    cfg = load_yaml(template)
    hooks = [w for r in cfg.get("receivers") or [] for w in r.get("webhook_configs") or []]
    if not hooks:
        raise ConfigError(str(template), ["receivers: no webhook_configs; the project's receiver needs one"])
    for w in hooks:
        w["url"] = webhook_url
        w["send_resolved"] = True
        http = w.setdefault("http_config", {}) if token_file or ca_file else w.get("http_config") or {}
        if token_file:
            http["authorization"] = {"type": "Bearer", "credentials_file": str(token_file)}
        if ca_file:
            http["tls_config"] = {**(http.get("tls_config") or {}), "ca_file": str(ca_file)}
    return cfg


def render_rules(template: Path, rule_for: dict[str, str] | None = None) -> dict:
    """The alert rules with ``for`` durations overridden per alert name (``{"GpuAllocatedButIdle": "1m"}``)."""
    cfg = load_yaml(template)
    overrides = dict(rule_for or {})
    for group in cfg.get("groups") or []:
        for rule in group.get("rules") or []:
            if rule.get("alert") in overrides:
                rule["for"] = duration(overrides.pop(rule["alert"]))
    if overrides:
        known = [r.get("alert") for g in cfg.get("groups") or [] for r in g.get("rules") or []]
        raise ConfigError(str(template), [f"rule_for: unknown alert(s) {sorted(overrides)}; known: {known}"])
    return cfg


def write_yaml(path: Path, data: dict) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(data, sort_keys=False, width=120))
    return path


def parse_rule_for(items: list[str] | None) -> dict[str, str]:
    """``["GpuAllocatedButIdle=1m"]`` -> ``{"GpuAllocatedButIdle": "1m"}``."""
    out: dict[str, str] = {}
    for item in items or []:
        name, sep, value = item.partition("=")
        if not sep or not name or not value:
            raise ConfigError("--rule-for", [f"{item!r}: expected NAME=DURATION, e.g. GpuAllocatedButIdle=1m"])
        out[name] = duration(value)
    return out
