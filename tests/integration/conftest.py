"""Fixtures that start the simulated cluster (`gpupoc sim serve`) as a subprocess.

- ``sim_server``: one server per test module (faults via ``@pytest.mark.parametrize("sim_server",
  ["cross-tenant-logs"], indirect=True)``).
- ``start_sim``: a factory, ``start_sim(faults="gpus-leak", config=path, behaviours="throttled",
  behaviour_seed=0)``, for servers of one test.
Both give a :class:`SimServer` with url, kubeconfig, data_dir, tokens and helpers (``client()``,
``kubectl()``, ``audit_events()``).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml

from gpupoc.controlplane.binaries import kubectl_path
from tests.waiting import first_truthy


def kubectl_bin() -> str:
    """The built kubectl (the real control plane's version); fails naming ``make control-plane`` when absent."""
    return str(kubectl_path())


@pytest.fixture(autouse=True)
def _own_kubectl_cache(tmp_path_factory, monkeypatch):
    """kubectl's discovery cache (6 h) is keyed by host:port, and a simulated cluster's port is reused by a
    later one: a cached Kueue API group would outlive its cluster. Each test's kubectl calls get their own."""
    monkeypatch.setenv("KUBECACHEDIR", str(tmp_path_factory.mktemp("kubectl-cache")))

STARTUP_TIMEOUT = 300.0  # a stall guard: `gpupoc sim serve` is up in seconds, longer on a loaded machine


@dataclass
class SimServer:
    """A running `gpupoc sim serve`."""

    process: subprocess.Popen
    data_dir: Path
    url: str
    http_url: str
    kubeconfig: Path
    tokens: dict[str, str] = field(default_factory=dict)  # context -> bearer token
    namespaces: dict[str, str] = field(default_factory=dict)  # context -> namespace

    @property
    def admin_token(self) -> str:
        return self.tokens["admin"]

    @property
    def audit_log(self) -> Path:
        return self.data_dir / "audit.log"

    @property
    def log_file(self) -> Path:
        return self.data_dir / "server.log"

    @property
    def kubeconfig_http(self) -> Path:
        """The same contexts over plain HTTP (Python clients only: kubectl sends tokens only over TLS)."""
        return self.kubeconfig.with_name(self.kubeconfig.name + "-http")

    def client(self, context: str = "admin", http: bool = False):
        """A ``kubernetes.client.ApiClient`` for one kubeconfig context (TLS, or plain HTTP with ``http``)."""
        from kubernetes import config

        path = self.kubeconfig_http if http else self.kubeconfig
        return config.new_client_from_config(config_file=str(path), context=context)

    def kubectl(self, *args: str, context: str = "admin", timeout: float = 60, check: bool = False,
                input: str | None = None) -> subprocess.CompletedProcess:
        cmd = [kubectl_bin(), f"--kubeconfig={self.kubeconfig}", f"--context={context}",
               f"--cache-dir={self.data_dir / 'kubectl-cache'}", *args]
        res = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, input=input)
        if check and res.returncode != 0:
            raise AssertionError(f"{' '.join(cmd)} exited {res.returncode}: {res.stderr}")
        return res

    def audit_events(self) -> list[dict]:
        if not self.audit_log.exists():
            return []
        return [json.loads(line) for line in self.audit_log.read_text().splitlines() if line.strip()]

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(timeout=10)


def launch(data_dir: Path, faults: str = "", config: str | Path | None = None, port: int = 0,
           behaviours: str = "", behaviour_seed: int = 0, extra: tuple[str, ...] = ()) -> SimServer:
    """Start a server in ``data_dir`` (``extra``: more ``sim serve`` flags) and wait until it has written
    ``sim.json``."""
    data_dir.mkdir(parents=True, exist_ok=True)
    cmd = [sys.executable, "-m", "gpupoc.cli", "sim", "serve", "--port", str(port), "--data-dir", str(data_dir),
           *extra]
    if faults:
        cmd += ["--faults", faults]
    if behaviours:
        cmd += ["--behaviour", behaviours, "--behaviour-seed", str(behaviour_seed)]
    if config:
        cmd += ["--config", str(config)]
    log = open(data_dir / "server.log", "w")  # noqa: SIM115
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
    info_path = data_dir / "sim.json"

    def written() -> dict | None:
        if proc.poll() is not None:
            raise RuntimeError(f"gpupoc sim serve exited {proc.returncode}: {(data_dir / 'server.log').read_text()}")
        try:
            return json.loads(info_path.read_text()) if info_path.exists() else None
        except ValueError:  # written but not yet whole
            return None

    try:
        info = first_truthy(f"gpupoc sim serve to write {info_path}", written, step_seconds=STARTUP_TIMEOUT,
                            poll=0.1)
    except AssertionError as exc:
        proc.kill()
        raise RuntimeError(str(exc)) from None
    kc = yaml.safe_load(Path(info["kubeconfig"]).read_text())
    users = {u["name"]: u["user"]["token"] for u in kc["users"]}
    tokens = {c["name"]: users[c["context"]["user"]] for c in kc["contexts"]}
    namespaces = {c["name"]: c["context"].get("namespace", "default") for c in kc["contexts"]}
    return SimServer(proc, data_dir, info["url"], info.get("http_url", info["url"]), Path(info["kubeconfig"]),
                     tokens, namespaces)


@pytest.fixture(scope="module")
def sim_server(request, tmp_path_factory):
    """A simulated cluster for the whole test module; ``request.param`` (indirect) names fault profiles."""
    faults = getattr(request, "param", "") or ""
    server = launch(tmp_path_factory.mktemp("sim"), faults=faults)
    yield server
    server.stop()


@pytest.fixture
def start_sim(tmp_path):
    """Factory: ``start_sim(faults="a,b", config=None, behaviours="c,d", behaviour_seed=0)`` starts a server
    stopped after the test."""
    started: list[SimServer] = []

    def _start(faults: str = "", config: str | Path | None = None, behaviours: str = "",
               behaviour_seed: int = 0) -> SimServer:
        server = launch(tmp_path / f"sim{len(started)}", faults=faults, config=config, behaviours=behaviours,
                        behaviour_seed=behaviour_seed)
        started.append(server)
        return server

    yield _start
    for s in started:
        s.stop()


def wait_for(what: str, predicate, timeout: float = 120.0, poll: float = 0.3):
    """``predicate()``'s first truthy value, else AssertionError naming ``what`` and the last value seen.

    ``timeout`` is the budget of one step of what is awaited (seconds, more on a loaded machine): it starts
    again whenever ``predicate()`` returns something new, so a slow machine that keeps making progress is
    waited for, and the wait ends as soon as it holds (``tests/waiting.py`` ``first_truthy``)."""
    return first_truthy(what, predicate, step_seconds=timeout, poll=poll)
