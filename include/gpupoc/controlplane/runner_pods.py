"""One container of a pod on a KWOK node run as a local process by the process runner (``runner.py``): which
containers run (the project's workload image, and a virtual image asked to serve, which runs the workload
program's ``serve`` mode, the process the simulated kubelet's virtual server stands in for), its process with its
stdout and stderr written as CRI log lines, and the pod status the runner writes when the process ends."""

from __future__ import annotations

import datetime as dt
import fnmatch
import os
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

from kubernetes.utils import parse_quantity

from gpupoc.controlplane.pod_logs import cri_line
from gpupoc.kube.containers import build_argv, exit_code_of, serving_port
from gpupoc.podspec import labels as L
from gpupoc.common.processes import die_with_parent, tree_rss_bytes

WORKLOAD_IMAGE = "gpupoc/workload:*"
VIRTUAL_IMAGE = "gpupoc/virtual:*"
WORKLOAD_ENTRYPOINT = ["{python}", "-m", "gpupoc.workload"]  # the workload image's ENTRYPOINT (sim catalogue)
KWOK_ENDS = ("oom", "image-pull")  # ends kwok's Stages play (an oom pod's process is killed at its limit)


def process_argv(container: dict, env: dict[str, str]) -> list[str] | None:
    """The command the container runs as a local process, None when it runs none (kwok plays it)."""
    image = container.get("image", "")
    if fnmatch.fnmatchcase(image, WORKLOAD_IMAGE):
        return build_argv(container, WORKLOAD_ENTRYPOINT)
    if fnmatch.fnmatchcase(image, VIRTUAL_IMAGE):
        port = serving_port(container, env)
        if port is not None:
            return [sys.executable, "-m", "gpupoc.workload", "serve", "--port", str(port)]
    return None


def owns_end(pod: dict) -> bool:
    """Whether the process's exit ends the pod (the runner writes it): a pod that is not restarted and does not
    end in a way kwok plays (OOMKilled, a failed image pull)."""
    annotations = pod["metadata"].get("annotations") or {}
    return (pod["spec"].get("restartPolicy", "Always") != "Always"
            and annotations.get(L.VIRTUAL_END) not in KWOK_ENDS and len(pod["spec"]["containers"]) == 1)


def memory_limit_bytes(container: dict) -> int | None:
    """``resources.limits.memory`` in bytes, None when unset or unreadable."""
    raw = ((container.get("resources") or {}).get("limits") or {}).get("memory")
    try:
        return None if raw in (None, "") else int(parse_quantity(raw))
    except ValueError:
        return None


def rfc3339(at: dt.datetime) -> str:
    return at.astimezone(dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def exit_reason(code: int) -> str:
    return "Completed" if code == 0 else "OOMKilled" if code == 137 else "Error"


def terminal_status(pod: dict, exit_code: int, finished: dt.datetime) -> dict:
    """The pod's status once its one container exited with ``exit_code``: phase, Ready/ContainersReady False,
    the terminated state keeping the running state's ``startedAt`` (a strategic-merge patch of ``status``)."""
    statuses = (pod.get("status") or {}).get("containerStatuses") or [{}]
    now = rfc3339(finished)
    started = ((statuses[0].get("state") or {}).get("running") or {}).get("startedAt") or now
    c = pod["spec"]["containers"][0]
    ready = "PodCompleted" if exit_code == 0 else "PodFailed"
    conditions = [{"type": t, "status": "False", "reason": ready, "message": "", "lastTransitionTime": now}
                  for t in ("Ready", "ContainersReady")]
    container = {"name": c["name"], "image": c.get("image", ""), "imageID": "", "ready": False, "started": False,
                 "restartCount": statuses[0].get("restartCount", 0),
                 "state": {"terminated": {"exitCode": exit_code, "reason": exit_reason(exit_code),
                                          "startedAt": started, "finishedAt": now}}}
    return {"status": {"phase": "Succeeded" if exit_code == 0 else "Failed", "conditions": conditions,
                       "containerStatuses": [container]}}


@dataclass
class ContainerProcess:
    """A running container process; its output goes to ``log_path`` in CRI format."""

    namespace: str
    pod: str
    uid: str
    container: str
    proc: subprocess.Popen
    log_path: Path
    owns_end: bool
    address: str = ""
    ports: list[int] = field(default_factory=list)
    limit_bytes: int | None = None  # resources.limits.memory: the process tree is killed above it (exit 137)
    reported: bool = False  # its end was written to the pod
    pumps: list[threading.Thread] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @classmethod
    def spawn(cls, namespace: str, pod: str, uid: str, container: str, argv: list[str], env: dict[str, str],
              cwd: Path, log_path: Path, owns: bool) -> "ContainerProcess":
        cwd.mkdir(parents=True, exist_ok=True)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        proc = subprocess.Popen(argv, env=env, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True, preexec_fn=die_with_parent)
        cp = cls(namespace, pod, uid, container, proc, log_path, owns)
        for stream, name in ((proc.stdout, "stdout"), (proc.stderr, "stderr")):
            cp.pumps.append(threading.Thread(target=cp._pump, args=(stream, name), daemon=True))
            cp.pumps[-1].start()
        return cp

    def drain(self, timeout: float = 5.0) -> None:
        """Wait until the ended process's last lines are in its log (a child that keeps the pipes open aside)."""
        for t in self.pumps:
            t.join(timeout)

    def log(self, text: str, stream: str = "stdout") -> None:
        """Append one line to the container's CRI log."""
        with self._lock, open(self.log_path, "a", encoding="utf-8") as fh:
            fh.write(cri_line(dt.datetime.now(dt.timezone.utc), text, stream))

    def _pump(self, pipe, stream: str) -> None:
        for raw in iter(pipe.readline, b""):
            self.log(raw.decode("utf-8", "replace").rstrip("\n"), stream)
        pipe.close()

    def exit_code(self) -> int | None:
        """The container exit code once the process ended (signals as 128 + n), else None."""
        rc = self.proc.poll()
        return None if rc is None else exit_code_of(rc)

    def rss_bytes(self) -> int:
        """Resident memory of the process and its children."""
        return tree_rss_bytes(self.proc.pid)

    def enforce_memory_limit(self) -> bool:
        """Kill the process tree when it holds more than its limit, as the kernel's OOM killer would; True then."""
        if self.limit_bytes is None or self.proc.poll() is not None or self.rss_bytes() <= self.limit_bytes:
            return False
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            return False
        self.proc.wait()
        return True

    def stop(self, grace_seconds: float) -> None:
        """SIGTERM to the process group, SIGKILL after ``grace_seconds``; waits for it."""
        for sig, wait in ((signal.SIGTERM, grace_seconds), (signal.SIGKILL, None)):
            if self.proc.poll() is not None:
                return
            try:
                os.killpg(self.proc.pid, sig)
            except (ProcessLookupError, PermissionError):
                pass
            try:
                self.proc.wait(timeout=wait)
            except subprocess.TimeoutExpired:
                continue
