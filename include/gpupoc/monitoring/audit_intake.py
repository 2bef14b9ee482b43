"""Start, stop and check the audit webhook receiver (``gpupoc.monitoring.audit_webhook``) in the background,
as ``gpupoc stack`` does the alert receiver, and write the kubeconfig-format file the API server's
``--audit-webhook-config-file`` takes.

``<data-dir>/audit-webhook.json`` records pid, URL, record, config, token file and CA so that ``down`` stops
exactly what ``up`` started. By default the receiver requires a token it generated and serves HTTPS with a
CA it made (``gpupoc.monitoring.intake_auth``). The config (mode 0600) names the receiver by
``advertise_url`` (how the API server reaches it; default its listen address), the bearer token the API
server sends and the CA bundle it checks the receiver's certificate with.
"""

from __future__ import annotations

import base64
import json
import os
import signal
import subprocess
import sys
import time
from datetime import datetime, timezone
from pathlib import Path

import yaml

from urllib.parse import urlsplit

from gpupoc.common.pki import write_private
from gpupoc.common.processes import pid_alive
from gpupoc.exceptions import ConfigError, GpupocError
from gpupoc.monitoring.intake_auth import auth_flags, prepare
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
    """The webhook config at ``path``, mode 0600 (it holds the token)."""
    return write_private(path, yaml.safe_dump(webhook_config(url, token, ca_pem), sort_keys=False).encode())


def read_state(data_dir: Path) -> dict:
    try:
        return json.loads((Path(data_dir) / STATE_NAME).read_text())
    except (OSError, ValueError):
        return {}


def up(data_dir: Path = DEFAULT_DATA_DIR, host: str = "127.0.0.1", port: int = 0, token_file: Path | None = None,
       advertise_url: str | None = None, tls: tuple[Path, Path] | None = None, ca_file: Path | None = None,
       ready_timeout: float = 30.0, no_token: bool = False, no_tls: bool = False,
       tls_sans: tuple[str, ...] = ()) -> dict:
    """Start the receiver (or return the running one); returns the state file's content. The token and the
    certificate are generated under ``data_dir`` unless given (``token_file``; ``tls`` as (certificate, key)
    with ``ca_file``, default the certificate itself); ``no_token``/``no_tls`` switch them off on loopback."""
    data_dir = Path(data_dir).resolve()
    state = read_state(data_dir)
    if state and pid_alive(state.get("pid"), CMD_MARK):
        return state
    data_dir.mkdir(parents=True, exist_ok=True)
    advertised = urlsplit(advertise_url).hostname if advertise_url else None
    auth = prepare(data_dir, host, "audit webhook", token_file=token_file, tls=tls, ca_file=ca_file,
                   no_token=no_token, no_tls=no_tls, hosts=(*([advertised] if advertised else []), *tls_sans))
    port = port or free_port()
    url = f"{auth.scheme}://{host}:{port}"
    if advertise_url and urlsplit(advertise_url).scheme != auth.scheme:
        raise ConfigError("--advertise-url", [f"{advertise_url}: the receiver serves {auth.scheme}; name it with "
                                              f"{auth.scheme}://"])
    record, log = data_dir / RECORD_NAME, data_dir / "audit-webhook.log"
    cmd = [sys.executable, "-m", CMD_MARK, "--host", host, "--port", str(port), "--record", str(record),
           *auth_flags(auth)]
    with log.open("ab") as fh:
        proc = subprocess.Popen(cmd, stdout=fh, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, cwd=data_dir,
                                start_new_session=True)
    _wait_ready(proc, _health_url(url), log, ready_timeout, auth.ca_file)
    config = write_webhook_config(data_dir / CONFIG_NAME, advertise_url or url, auth.token, auth.ca_pem())
    state = {"pid": proc.pid, "url": url, "advertise_url": advertise_url or url, "record": str(record),
             "config": str(config), "log": str(log), "token_file": str(auth.token_file or ""),
             "ca_file": str(auth.ca_file or ""),
             "started_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
    (data_dir / STATE_NAME).write_text(json.dumps(state, indent=2))
    return state


def _health_url(url: str) -> str:
    """Where to ask the receiver for its health from this machine."""
    return url.replace("0.0.0.0", "127.0.0.1").replace("[::]", "127.0.0.1") + "/-/healthy"


def _wait_ready(proc: subprocess.Popen, url: str, log: Path, timeout: float, ca_file: Path | None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
            raise GpupocError(f"the audit webhook receiver exited with code {proc.returncode}; log {log}:\n{tail}")
        if http_ok(url, ca_file=ca_file):
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
    ready = alive and http_ok(_health_url(state.get("url", "")), ca_file=Path(state["ca_file"]) if
                              state.get("ca_file") else None)
    return {**state, "running": alive, "ready": ready}
