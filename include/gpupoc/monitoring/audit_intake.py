"""Start, stop and check the audit webhook receiver (``gpupoc.monitoring.audit_webhook``) in the background,
as ``gpupoc stack`` does the alert receiver, and write the kubeconfig-format file the API server's
``--audit-webhook-config-file`` takes.

``<data-dir>/audit-webhook.json`` records pid, URL, record and config so that ``down`` stops exactly what
``up`` started. The config names the receiver by ``advertise_url`` (how the API server reaches it; default
its listen address) and, with a token file, the bearer token the API server sends (the file is then 0600).
"""

from __future__ import annotations

import base64
import json
import os
import signal
import socket
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import yaml

from gpupoc.common.processes import pid_alive
from gpupoc.exceptions import GpupocError
from gpupoc.monitoring.stack import free_port, http_ok

STATE_NAME = "audit-webhook.json"
RECORD_NAME = "audit-events.jsonl"
CONFIG_NAME = "audit-webhook-config.yaml"
CMD_MARK = "gpupoc.monitoring.audit_webhook"
DEFAULT_DATA_DIR = Path("var/audit")


def webhook_config(url: str, token: str | None = None, ca_pem: bytes | None = None) -> dict:
    """The kubeconfig-format webhook config (``clusters[].cluster.server`` is where the batches go; with
    ``ca_pem`` the API server trusts the receiver's HTTPS certificate through it)."""
    user: dict = {"token": token} if token else {}
    cluster: dict = {"server": url}
    if ca_pem:
        cluster["certificate-authority-data"] = base64.b64encode(ca_pem).decode()
    return {"apiVersion": "v1", "kind": "Config", "preferences": {},
            "clusters": [{"name": "gpupoc-audit-webhook", "cluster": cluster}],
            "users": [{"name": "kube-apiserver", "user": user}],
            "contexts": [{"name": "default", "context": {"cluster": "gpupoc-audit-webhook", "user": "kube-apiserver"}}],
            "current-context": "default"}


def write_webhook_config(path: Path, url: str, token: str | None = None, ca_pem: bytes | None = None) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(yaml.safe_dump(webhook_config(url, token, ca_pem), sort_keys=False))
    return path


def read_state(data_dir: Path) -> dict:
    try:
        return json.loads((Path(data_dir) / STATE_NAME).read_text())
    except (OSError, ValueError):
        return {}


def up(data_dir: Path = DEFAULT_DATA_DIR, host: str = "127.0.0.1", port: int = 0, token_file: Path | None = None,
       advertise_url: str | None = None, tls: tuple[Path, Path] | None = None, ca_file: Path | None = None,
       ready_timeout: float = 30.0) -> dict:
    """Start the receiver (or return the running one); returns the state file's content. ``tls`` is
    (certificate, key) to serve HTTPS; ``ca_file`` the CA the API server verifies it with (default: the
    certificate itself, for a self-signed one)."""
    data_dir = Path(data_dir).resolve()
    state = read_state(data_dir)
    if state and pid_alive(state.get("pid"), CMD_MARK):
        return state
    data_dir.mkdir(parents=True, exist_ok=True)
    port = port or free_port()
    url = f"{'https' if tls else 'http'}://{host}:{port}"
    record, log = data_dir / RECORD_NAME, data_dir / "audit-webhook.log"
    cmd = [sys.executable, "-m", CMD_MARK, "--host", host, "--port", str(port), "--record", str(record)]
    if tls is not None:
        cmd += ["--tls-cert", str(Path(tls[0]).resolve()), "--tls-key", str(Path(tls[1]).resolve())]
    token = None
    if token_file is not None:
        token = Path(token_file).read_text(encoding="utf-8").strip()
        cmd += ["--token-file", str(Path(token_file).resolve())]
    with log.open("ab") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=data_dir,
                                start_new_session=True)
    _wait_ready(proc, _health_url(url), log, ready_timeout)
    ca_pem = Path(ca_file or tls[0]).read_bytes() if tls is not None else None
    config = write_webhook_config(data_dir / CONFIG_NAME, advertise_url or url, token, ca_pem)
    state = {"pid": proc.pid, "url": url, "advertise_url": advertise_url or url, "record": str(record),
             "config": str(config), "log": str(log),
             "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    (data_dir / STATE_NAME).write_text(json.dumps(state, indent=2))
    return state


def _health_url(url: str) -> str:
    """Where to ask the receiver for its health from this machine (plain HTTP only: an HTTPS receiver is
    asked whether its port accepts connections)."""
    return url.replace("0.0.0.0", "127.0.0.1").replace("[::]", "127.0.0.1") + "/-/healthy"


def _answers(url: str) -> bool:
    if url.startswith("https://"):
        host, _, port = url[len("https://"):].split("/", 1)[0].rpartition(":")
        try:
            with socket.create_connection((host, int(port)), timeout=2):
                return True
        except OSError:
            return False
    return http_ok(url)


def _wait_ready(proc: subprocess.Popen, url: str, log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
            raise GpupocError(f"the audit webhook receiver exited with code {proc.returncode}; log {log}:\n{tail}")
        if _answers(url):
            return
        time.sleep(0.1)
    proc.terminate()
    raise GpupocError(f"the audit webhook receiver was not ready at {url} after {timeout:.0f}s; see its log {log}")


def down(data_dir: Path = DEFAULT_DATA_DIR, timeout: float = 10.0) -> list[str]:
    """Stop the receiver ``up`` started, by pid (TERM, then KILL after ``timeout``)."""
    data_dir = Path(data_dir).resolve()
    state = read_state(data_dir)
    pid = state.get("pid")
    if not pid_alive(pid, CMD_MARK):
        return []
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while pid_alive(pid, CMD_MARK) and time.monotonic() < deadline:
        _reap(pid)
        time.sleep(0.05)
    if pid_alive(pid, CMD_MARK):
        os.kill(pid, signal.SIGKILL)
    _reap(pid)
    state["stopped_at"] = datetime.now(timezone.utc).isoformat(timespec="seconds")
    (data_dir / STATE_NAME).write_text(json.dumps(state, indent=2))
    return [f"audit webhook receiver (pid {pid})"]


def _reap(pid: int) -> None:
    try:
        os.waitpid(pid, os.WNOHANG)
    except ChildProcessError:
        pass


def status(data_dir: Path = DEFAULT_DATA_DIR) -> dict:
    state = read_state(Path(data_dir).resolve())
    if not state:
        return {"running": False, "reason": f"no {STATE_NAME} under {data_dir}; run `gpupoc audit webhook up`"}
    alive = pid_alive(state.get("pid"), CMD_MARK)
    return {**state, "running": alive, "ready": alive and _answers(_health_url(state.get("url", "")))}
