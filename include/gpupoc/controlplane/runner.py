"""The process runner of the real control plane: the node agent's part kwok does not play. It watches the pods
bound to KWOK nodes and runs each container of the project's workload image (and each virtual replica asked to
serve) as a local process, as the simulated kubelet does: the same argv and environment
(``gpupoc.kube.containers``), the namespace's artifact volume as a host directory (``GPUPOC_ARTIFACT_DIR``), its
output as the container's CRI log served by kwok's ``Logs`` object (``kubectl logs``), a ``PortForward`` object to
the loopback address it listens on, its readiness probe (the pod's Ready condition), and, for a pod that is not
restarted, its exit as the pod's end. Services reach replicas through ``runner_services.py``.

``start_process_runner(cp)`` starts it detached (``run/process-runner.pid``, ``logs/process-runner.log``);
``stop_process_runner(layout)`` stops it and every process it runs (``ControlPlane.stop`` does)."""

from __future__ import annotations

import argparse
import datetime as dt
import json
import signal
import sys
import threading
import time
import urllib.request
from dataclasses import dataclass
from pathlib import Path

from kubernetes import client, config
from kubernetes.client.rest import ApiException

from gpupoc.controlplane import processes
from gpupoc.controlplane.layout import Layout
from gpupoc.controlplane.pod_logs import logs_object
from gpupoc.controlplane.port_forward import pod_address, portforward_object
from gpupoc.controlplane.readiness import wait_until
from gpupoc.controlplane.runner_pods import (
    ContainerProcess, memory_limit_bytes, owns_end, process_argv, terminal_status,
)
from gpupoc.controlplane.runner_services import Forwarders, ServiceProxy, ready_endpoints
from gpupoc.kube.containers import ConfigMissing, StartFailed, container_env, process_env
from gpupoc.podspec import labels as L

NAME = "process-runner"
MARK = "gpupoc.controlplane.runner"  # in its command line: how its pid is told from a reused one
POLL_SECONDS = 1.0
STOP_GRACE_SECONDS = 5.0
MANAGER = "gpupoc-process-runner"
SMP = "application/strategic-merge-patch+json"
APPLY = "application/apply-patch+yaml"
TERMINAL = ("Succeeded", "Failed")
BIND_ENV = "GPUPOC_POD_ADDRESS"  # where the workload's serve mode listens (workload/serving.py)


@dataclass(frozen=True)
class RunnerStart:
    pid: int
    resumed: bool  # it was running already
    seconds: float  # until it had listed the pods once

    @property
    def timing_name(self) -> str:
        return NAME + (" (resumed)" if self.resumed else "")


def start_process_runner(cp, timeout: float = 60.0) -> RunnerStart:
    """Start the runner for the control plane ``cp`` (or find it running) and wait until it watches."""
    layout: Layout = cp.layout
    pid = processes.running_pid(layout, NAME, Path(MARK))
    resumed = pid is not None
    if not resumed:
        _ready_file(layout).unlink(missing_ok=True)
        argv = [sys.executable, "-m", MARK, "--root", str(layout.root), "--kubectl", str(cp.kubectl)]
        pid = processes.start(layout, NAME, argv)
    took = wait_until(layout, NAME, pid, lambda: (_ready_file(layout).is_file(), "no pod listed yet"),
                      timeout=timeout)
    return RunnerStart(pid, resumed, took)


def stop_process_runner(layout: Layout) -> bool:
    """Stop the runner (it stops its processes first); True when it was running."""
    return processes.stop(layout, NAME, Path(MARK), grace_seconds=STOP_GRACE_SECONDS + 10)


def _ready_file(layout: Layout) -> Path:
    return layout.run / f"{NAME}.ready"


class _Secrets:
    """``container_env``'s store over the API server (secrets and configmaps)."""

    def __init__(self, core: client.CoreV1Api) -> None:
        self.core = core

    def get(self, resource: str, namespace: str, name: str) -> dict | None:
        read = self.core.read_namespaced_secret if resource == "secrets" else self.core.read_namespaced_config_map
        try:
            return json.loads(read(name, namespace, _preload_content=False).data)
        except ApiException as exc:
            if exc.status == 404:
                return None
            raise


class Runner:
    """One pass (``tick``) lists KWOK nodes and their pods and brings each pod's processes in line."""

    def __init__(self, layout: Layout, kubectl: Path) -> None:
        self.layout = layout
        api = config.new_client_from_config(config_file=str(layout.kubeconfig))
        self.core, self.custom = client.CoreV1Api(api), client.CustomObjectsApi(api)
        self.discovery = client.DiscoveryV1Api(api)
        self.procs: dict[tuple[str, str], ContainerProcess] = {}  # (namespace, pod) -> its process
        self.proxies: dict[tuple[str, str], ServiceProxy] = {}
        self.forwarders = Forwarders(kubectl, layout.kubeconfig)
        self.skipped: set[str] = set()  # uids that run no process (kwok plays them) or whose process cannot start

    def _list(self, call, **kw) -> list[dict]:
        return json.loads(call(_preload_content=False, **kw).data)["items"]

    def tick(self) -> None:
        nodes = {n["metadata"]["name"] for n in self._list(self.core.list_node)
                 if (n["metadata"].get("annotations") or {}).get("kwok.x-k8s.io/node") == "fake"}
        pods = {(p["metadata"]["namespace"], p["metadata"]["name"]): p
                for p in self._list(self.core.list_pod_for_all_namespaces) if p["spec"].get("nodeName") in nodes}
        for key, proc in list(self.procs.items()):
            pod = pods.get(key)
            if pod is None or pod["metadata"]["uid"] != proc.uid:
                self._retire(key, "the pod is gone")
        for key, pod in pods.items():
            try:
                self._sync(key, pod)
            except (ApiException, OSError) as exc:
                log(f"{key[0]}/{key[1]}: {exc}")
        self.forwarders.keep(set(pods))
        for proxy in self.proxies.values():
            proxy.warm()

    def _sync(self, key: tuple[str, str], pod: dict) -> None:
        status, proc = pod.get("status") or {}, self.procs.get(key)
        if pod["metadata"].get("deletionTimestamp") or status.get("phase") in TERMINAL:
            if proc is not None:
                self._retire(key, "the pod ended" if status.get("phase") in TERMINAL else "the pod is deleted")
            return
        if proc is None:
            if status.get("podIP") and pod["metadata"]["uid"] not in self.skipped:
                self._start(key, pod)
            return
        code = proc.exit_code()
        if code is not None and not proc.reported and status.get("phase") == "Running":
            proc.reported = True
            proc.drain()
            if proc.owns_end:
                self.core.patch_namespaced_pod_status(key[1], key[0], terminal_status(
                    pod, code, dt.datetime.now(dt.timezone.utc)), _content_type=SMP)
            log(f"{key[0]}/{key[1]}: process exited {code}")
        elif code is None and proc.enforce_memory_limit():
            proc.log(f"killed: more than its memory limit ({proc.limit_bytes} bytes)", "stderr")
        elif code is None and status.get("phase") == "Running":
            self._probe(key, pod, proc)

    def _start(self, key: tuple[str, str], pod: dict) -> None:
        ns, name = key
        uid, c = pod["metadata"]["uid"], pod["spec"]["containers"][0]
        try:
            user_env = container_env(_Secrets(self.core), pod, c)
        except ConfigMissing as exc:
            return log(f"{ns}/{name}: waiting: {exc}")
        argv = process_argv(c, user_env)
        if argv is None or (pod["metadata"].get("annotations") or {}).get(L.VIRTUAL_END) == "image-pull":
            self.skipped.add(uid)
            return
        owns = owns_end(pod)
        if owns:
            self.core.patch_namespaced_pod(name, ns, {"metadata": {"annotations": {L.PROCESS_RUNNER: "true"}}},
                                           _content_type=SMP)
        address = pod_address(uid)
        root = self.layout.root
        platform = {**self._service_env(ns), "HOSTNAME": name, "NODE_NAME": pod["spec"]["nodeName"],
                    "POD_NAME": name, "POD_NAMESPACE": ns, BIND_ENV: address, **user_env,
                    "GPUPOC_ARTIFACT_DIR": str(_dir(root / "volumes" / ns / "artifacts")),
                    "GPUPOC_TELEMETRY_FILE": str(_dir(root / "telemetry" / ns) / f"{name}.json")}
        log_path = self.layout.pod_logs / ns / name / f"{c['name']}.log"
        log_path.parent.mkdir(parents=True, exist_ok=True)
        log_path.write_text("", encoding="utf-8")  # a new container instance: a new log
        try:
            proc = ContainerProcess.spawn(ns, name, uid, c["name"], argv, process_env({}, platform),
                                          root / "workdirs" / ns / name / c["name"], log_path, owns)
        except (OSError, StartFailed) as exc:
            self.skipped.add(uid)
            return log(f"{ns}/{name}: cannot start {argv[:4]}: {exc}")
        proc.address = address
        proc.ports = sorted({int(p["containerPort"]) for p in c.get("ports") or []})
        proc.limit_bytes = memory_limit_bytes(c)
        self.procs[key] = proc
        owner = {"apiVersion": "v1", "kind": "Pod", "name": name, "uid": uid}  # the garbage collector removes them
        self._apply("logs", logs_object(ns, name, {c["name"]: log_path}), owner)
        if proc.ports:
            self._apply("portforwards", portforward_object(ns, name, address, proc.ports), owner)
        log(f"{ns}/{name}: started {' '.join(argv[1:])} (pid {proc.proc.pid}, {address}, owns its end: {owns})")

    def _apply(self, plural: str, obj: dict, owner: dict) -> None:
        meta = obj["metadata"]
        meta["ownerReferences"] = [owner]
        self.custom.patch_namespaced_custom_object("kwok.x-k8s.io", "v1alpha1", meta["namespace"], plural,
                                                   meta["name"], obj, field_manager=MANAGER, force=True,
                                                   _content_type=APPLY)

    def _service_env(self, namespace: str) -> dict[str, str]:
        """``{SVC}_SERVICE_HOST``/``_PORT`` of the namespace's Services: each its local proxy."""
        out: dict[str, str] = {}
        for svc in self._list(self.core.list_namespaced_service, namespace=namespace):
            ports = (svc.get("spec") or {}).get("ports") or []
            if not ports:
                continue
            name = svc["metadata"]["name"]
            proxy = self.proxies.get((namespace, name))
            if proxy is None:
                proxy = self.proxies[(namespace, name)] = ServiceProxy(
                    namespace, name, self._endpoints_of(ports[0].get("name")), self.forwarders, log)
            prefix = name.upper().replace("-", "_")
            out[f"{prefix}_SERVICE_HOST"], out[f"{prefix}_SERVICE_PORT"] = "127.0.0.1", str(proxy.port)
            for p in ports:
                if p.get("name"):
                    out[f"{prefix}_SERVICE_PORT_{p['name'].upper().replace('-', '_')}"] = str(proxy.port)
        return out

    def _endpoints_of(self, port_name: str | None):
        def endpoints(namespace: str, service: str) -> list[tuple[str, int]]:
            slices = self._list(self.discovery.list_namespaced_endpoint_slice, namespace=namespace,
                                label_selector=f"kubernetes.io/service-name={service}")
            return ready_endpoints(slices, port_name)
        return endpoints

    def _probe(self, key: tuple[str, str], pod: dict, proc: ContainerProcess) -> None:
        """The container's HTTP readiness probe against its process; the pod's Ready follows it."""
        c = pod["spec"]["containers"][0]
        get = (c.get("readinessProbe") or {}).get("httpGet")
        if not get:
            return
        port = get.get("port")
        if not isinstance(port, int):
            port = next((p["containerPort"] for p in c.get("ports") or [] if p.get("name") == port), None)
        ready = port is not None and _http_ok(f"http://{proc.address}:{port}{get.get('path', '/')}")
        conds = {x["type"]: x.get("status") for x in (pod.get("status") or {}).get("conditions") or []}
        if conds.get("Ready") == ("True" if ready else "False"):
            return
        now, flag = dt.datetime.now(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"), "True" if ready else "False"
        reason = "" if ready else "ContainersNotReady"
        patch = {"status": {"conditions": [{"type": t, "status": flag, "reason": reason, "lastTransitionTime": now}
                                           for t in ("Ready", "ContainersReady")],
                            "containerStatuses": [{"name": c["name"], "ready": ready}]}}
        self.core.patch_namespaced_pod_status(key[1], key[0], patch, _content_type=SMP)

    def _retire(self, key: tuple[str, str], why: str) -> None:
        proc = self.procs.pop(key)
        if proc.exit_code() is None:
            log(f"{key[0]}/{key[1]}: stopping its process ({why})")
            threading.Thread(target=proc.stop, args=(STOP_GRACE_SECONDS,), daemon=True).start()

    def shutdown(self) -> None:
        for proc in self.procs.values():
            proc.stop(STOP_GRACE_SECONDS)
        for proxy in self.proxies.values():
            proxy.close()
        self.forwarders.stop()


def _http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1.0) as r:
            return 200 <= r.status < 400
    except OSError:
        return False


def _dir(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    return path


def log(text: str) -> None:
    print(f"{time.strftime('%Y-%m-%dT%H:%M:%SZ', time.gmtime())} {text}", flush=True)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gpupoc.controlplane.runner")
    p.add_argument("--root", type=Path, required=True, help="the control plane's directory")
    p.add_argument("--kubectl", type=Path, required=True, help="the built kubectl (for port-forwards)")
    a = p.parse_args(argv)
    layout = Layout(a.root.resolve())
    stopping = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stopping.set())
    signal.signal(signal.SIGINT, lambda *_: stopping.set())
    runner = Runner(layout, a.kubectl)
    try:
        while not stopping.is_set():
            try:
                runner.tick()
                _ready_file(layout).touch()
            except (ApiException, OSError) as exc:
                log(f"listing pods: {exc}")
            stopping.wait(POLL_SECONDS)
    finally:
        runner.shutdown()
        _ready_file(layout).unlink(missing_ok=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
