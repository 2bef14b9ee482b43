"""Start, stop and check the local monitoring stack: real Prometheus and Alertmanager plus the webhook receiver.

Everything listens on 127.0.0.1 (free ports unless given), keeps its data under the data dir, and is recorded
with pid and URL in ``<data-dir>/stack.json`` so that ``down`` stops exactly what ``up`` started. The receiver
requires a bearer token and serves HTTPS (``<data-dir>/receiver/``: ``token``, ``tls/``); Alertmanager's
webhook ``http_config`` carries the token's file and the CA.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from gpupoc.common.processes import pid_alive
from gpupoc.exceptions import GpupocError, SourceUnavailable
from gpupoc.monitoring import config as mcfg
from gpupoc.monitoring.intake_auth import auth_flags, client_context, prepare

PROMETHEUS_BIN = "/usr/bin/prometheus"
ALERTMANAGER_BIN = "/usr/bin/prometheus-alertmanager"
INSTALL_HINT = "install it with scripts/install-monitoring.sh (Debian packages prometheus, prometheus-alertmanager)"
RECORD_NAME = "alerts.jsonl"
# what a live pid of each component must have in its command line (guards against reused pids)
_CMD_MARK = {"prometheus": "prometheus", "alertmanager": "alertmanager", "receiver": "gpupoc.monitoring.receiver"}


@dataclass
class StackOptions:
    data_dir: Path = Path("var/monitoring")
    sim_url: str | None = None
    sim_json: Path = Path("var/sim/sim.json")
    # where the dcgm-exporter and kube-state-metrics series are served instead of the simulated cluster: gpupoc's
    # exporter reading a real API server (`gpupoc controlplane exporter up` prints its URL)
    metrics_url: str | None = None
    scrape_interval: str = "5s"
    evaluation_interval: str = "5s"
    prometheus_port: int = 0
    alertmanager_port: int = 0
    receiver_port: int = 0
    rule_for: dict[str, str] = field(default_factory=dict)
    config_dir: Path | None = None
    ready_timeout: float = 30.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def resolve_sim_url(opts: StackOptions) -> str:
    if opts.sim_url:
        return opts.sim_url.rstrip("/")
    try:
        info = json.loads(Path(opts.sim_json).read_text())
        # the plain-HTTP listener when the cluster offers one (Prometheus then needs no CA), else the API URL
        return (info.get("http_url") or info["url"]).rstrip("/")
    except (OSError, ValueError, KeyError) as exc:
        raise SourceUnavailable(str(opts.sim_json), f"no simulated cluster URL ({exc.__class__.__name__}: {exc})",
                                "start the cluster with `gpupoc sim serve` or pass --sim-url URL") from exc


def resolve_metrics_url(opts: StackOptions) -> tuple[str, str]:
    """(URL, source) Prometheus scrapes both jobs from: ``metrics_url`` ("exporter"), else the simulated
    cluster's ("simulated cluster")."""
    if opts.metrics_url:
        return opts.metrics_url.rstrip("/"), "exporter"
    return resolve_sim_url(opts), "simulated cluster"


def http_ok(url: str, timeout: float = 2.0, ca_file: Path | None = None) -> bool:
    """Whether ``url`` answers 200 (over HTTPS, trusting ``ca_file``)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout, context=client_context(ca_file)) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError):
        return False


def read_state(data_dir: Path) -> dict:
    try:
        return json.loads((Path(data_dir) / "stack.json").read_text())
    except (OSError, ValueError):
        return {}


def _running(state: dict) -> dict[str, bool]:
    return {name: pid_alive((state.get(name) or {}).get("pid"), mark) for name, mark in _CMD_MARK.items()}


def _spawn(cmd: list[str], log: Path, cwd: Path) -> subprocess.Popen:
    with log.open("ab") as fh:
        return subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=cwd,
                                start_new_session=True)


def _wait_ready(name: str, proc: subprocess.Popen, url: str, log: Path, timeout: float,
                ca_file: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
            raise GpupocError(f"{name} exited with code {proc.returncode} during start-up; log {log}:\n{tail}")
        if http_ok(url, ca_file=ca_file):
            return
        time.sleep(0.1)
    raise GpupocError(f"{name} not ready at {url} after {timeout:.0f}s; see its log {log}")


def up(opts: StackOptions) -> dict:
    """Start the stack (or return the running one); returns the stack.json content."""
    data_dir = Path(opts.data_dir).resolve()
    state = read_state(data_dir)
    alive = _running(state)
    if state and not state.get("stopped_at") and all(alive.values()):
        return _retarget(state, opts)
    if any(alive.values()):
        down(data_dir)
    for binary in (PROMETHEUS_BIN, ALERTMANAGER_BIN):
        if not os.access(binary, os.X_OK):
            raise GpupocError(f"{binary} not found; {INSTALL_HINT}")
    metrics_url, source = resolve_metrics_url(opts)
    src = Path(opts.config_dir) if opts.config_dir else mcfg.monitoring_dir()
    etc = data_dir / "config"
    for sub in ("prometheus", "alertmanager", "logs"):
        (data_dir / sub).mkdir(parents=True, exist_ok=True)
    ports = {k: getattr(opts, f"{k}_port") or free_port() for k in ("prometheus", "alertmanager", "receiver")}
    auth = prepare(data_dir / "receiver", "127.0.0.1", "alert receiver")
    urls = {k: f"{auth.scheme if k == 'receiver' else 'http'}://127.0.0.1:{p}" for k, p in ports.items()}
    record = data_dir / RECORD_NAME
    rules = mcfg.write_yaml(etc / "rules" / "gpupoc.rules.yml",
                            mcfg.render_rules(src / "rules" / "gpupoc.rules.yml", opts.rule_for))
    prom_cfg = mcfg.write_yaml(etc / "prometheus.yml", mcfg.render_prometheus(
        src / "prometheus.yml", metrics_url, f"127.0.0.1:{ports['alertmanager']}", [rules],
        opts.scrape_interval, opts.evaluation_interval))
    am_cfg = mcfg.write_yaml(etc / "alertmanager.yml",
                             mcfg.render_alertmanager(src / "alertmanager.yml", f"{urls['receiver']}/alerts",
                                                      auth.token_file, auth.ca_file))
    logs = {k: data_dir / "logs" / f"{k}.log" for k in ports}
    cmds = {
        "receiver": [sys.executable, "-m", "gpupoc.monitoring.receiver", "--host", "127.0.0.1",
                     "--port", str(ports["receiver"]), "--record", str(record), *auth_flags(auth)],
        "alertmanager": [ALERTMANAGER_BIN, f"--config.file={am_cfg}", f"--storage.path={data_dir / 'alertmanager'}",
                         f"--web.listen-address=127.0.0.1:{ports['alertmanager']}", "--cluster.listen-address=",
                         f"--web.external-url={urls['alertmanager']}"],
        "prometheus": [PROMETHEUS_BIN, f"--config.file={prom_cfg}", f"--storage.tsdb.path={data_dir / 'prometheus'}",
                       f"--web.listen-address=127.0.0.1:{ports['prometheus']}", "--web.enable-lifecycle",
                       "--storage.tsdb.retention.time=30d", f"--web.external-url={urls['prometheus']}"],
    }
    health = {"receiver": "/-/healthy", "alertmanager": "/-/ready", "prometheus": "/-/ready"}
    state = {"data_dir": str(data_dir), "metrics_url": metrics_url, "metrics_source": source,
             "sim_url": metrics_url if source == "simulated cluster" else None, "scrape_interval": opts.scrape_interval,
             "evaluation_interval": opts.evaluation_interval,
             "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    stack_file = data_dir / "stack.json"
    try:
        for name in ("receiver", "alertmanager", "prometheus"):
            proc = _spawn(cmds[name], logs[name], data_dir)
            state[name] = {"pid": proc.pid, "url": urls[name], "log": str(logs[name])}
            stack_file.write_text(json.dumps(state, indent=2))
            _wait_ready(name, proc, urls[name] + health[name], logs[name], opts.ready_timeout,
                        auth.ca_file if name == "receiver" else None)
    except Exception:
        down(data_dir)
        raise
    state["receiver"].update(record=str(record), token_file=str(auth.token_file or ""),
                             ca_file=str(auth.ca_file or ""))
    state["prometheus"]["config"] = str(prom_cfg)
    state["alertmanager"]["config"] = str(am_cfg)
    stack_file.write_text(json.dumps(state, indent=2))
    return state


def _retarget(state: dict, opts: StackOptions) -> dict:
    """A running stack whose cluster moved (new ``sim serve`` port, or another exporter): rewrite the scrape
    targets and reload."""
    try:
        metrics_url, source = resolve_metrics_url(opts)
    except SourceUnavailable:
        return state
    if metrics_url == (state.get("metrics_url") or state.get("sim_url")):
        return state
    src = Path(opts.config_dir) if opts.config_dir else mcfg.monitoring_dir()
    prom_cfg = Path(state["prometheus"]["config"])
    current = mcfg.load_yaml(prom_cfg)
    cfg = mcfg.render_prometheus(src / "prometheus.yml", metrics_url,
                                 current["alerting"]["alertmanagers"][0]["static_configs"][0]["targets"][0],
                                 [Path(p) for p in current.get("rule_files") or []], state["scrape_interval"],
                                 state["evaluation_interval"])
    mcfg.write_yaml(prom_cfg, cfg)
    req = urllib.request.Request(state["prometheus"]["url"] + "/-/reload", method="POST")
    try:
        with urllib.request.urlopen(req, timeout=10):
            pass
    except (urllib.error.URLError, OSError) as exc:
        raise GpupocError(f"Prometheus at {state['prometheus']['url']} did not reload {prom_cfg}: {exc}; "
                          "run `gpupoc stack down` then `gpupoc stack up`") from exc
    state.update(metrics_url=metrics_url, metrics_source=source,
                 sim_url=metrics_url if source == "simulated cluster" else None)
    (Path(state["data_dir"]) / "stack.json").write_text(json.dumps(state, indent=2))
    return state


def down(data_dir: Path, timeout: float = 10.0) -> list[str]:
    """Stop the stack's processes by pid (TERM, then KILL after ``timeout``); returns what was stopped."""
    data_dir = Path(data_dir).resolve()
    state = read_state(data_dir)
    stopped = []
    for name in ("prometheus", "alertmanager", "receiver"):
        pid = (state.get(name) or {}).get("pid")
        if not pid_alive(pid, _CMD_MARK[name]):
            continue
        os.kill(pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        while pid_alive(pid, _CMD_MARK[name]) and time.monotonic() < deadline:
            _reap(pid)
            time.sleep(0.05)
        if pid_alive(pid, _CMD_MARK[name]):
            os.kill(pid, signal.SIGKILL)
        _reap(pid)
        stopped.append(f"{name} (pid {pid})")
    if state:
        state["stopped_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
        (data_dir / "stack.json").write_text(json.dumps(state, indent=2))
    return stopped


def _reap(pid: int) -> None:
    """Collect the exit status when the process is our own child (so it does not linger as a zombie)."""
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def status(data_dir: Path) -> dict:
    """Health of each component and of Prometheus's scrape targets."""
    state = read_state(Path(data_dir).resolve())
    if not state:
        return {"running": False, "reason": f"no stack.json under {data_dir}; run `gpupoc stack up`"}
    alive = _running(state)
    out: dict = {"running": all(alive.values()) and not state.get("stopped_at"), "components": {}, "targets": []}
    paths = {"prometheus": "/-/ready", "alertmanager": "/-/ready", "receiver": "/-/healthy"}
    for name in ("prometheus", "alertmanager", "receiver"):
        comp = state.get(name) or {}
        url = comp.get("url", "")
        ca = Path(comp["ca_file"]) if comp.get("ca_file") else None
        out["components"][name] = {"pid": comp.get("pid"), "url": url, "alive": alive[name],
                                   "ready": alive[name] and http_ok(url + paths[name], ca_file=ca)}
    if out["components"]["prometheus"]["ready"]:
        try:
            with urllib.request.urlopen(state["prometheus"]["url"] + "/api/v1/targets", timeout=5) as resp:
                targets = json.loads(resp.read())["data"]["activeTargets"]
            out["targets"] = [{"job": t["labels"].get("job"), "url": t.get("scrapeUrl"), "health": t.get("health"),
                               "last_error": t.get("lastError", "")} for t in targets]
        except (urllib.error.URLError, OSError, ValueError, KeyError):
            pass
    out["record"] = (state.get("receiver") or {}).get("record")
    out["sim_url"] = state.get("sim_url")
    out["metrics_url"] = state.get("metrics_url") or state.get("sim_url")
    out["healthy"] = out["running"] and all(c["ready"] for c in out["components"].values())
    return out
