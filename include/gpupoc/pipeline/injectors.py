"""Node failure injection, pluggable and recorded: the simulator's admin endpoint, an operator's command,
or ``kubectl cordon`` + ``drain`` on a real cluster."""

from __future__ import annotations

import shlex
import subprocess
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel

from gpupoc.common.timefmt import rfc3339, utcnow
from gpupoc.pipeline.k8s import KubeCaller


class Injection(BaseModel):
    """One action the pipeline took to provoke (or undo) a failure."""

    method: str  # sim-endpoint | command | kubectl-drain | workload-spec | pipeline-delete
    action: str
    target: str
    at: str
    by: str
    command: str = ""
    ok: bool = True
    detail: str = ""


class NodeInjector(Protocol):
    def fail(self, node: str) -> Injection: ...

    def recover(self, node: str) -> Injection: ...


@dataclass
class SimNodeInjector:
    """The simulated cluster's admin endpoint ``POST /apis/sim.gpupoc.io/v1/nodes/{name}/fail|recover``."""

    admin: KubeCaller
    by: str = "kubernetes-admin"

    def _do(self, node: str, action: str) -> Injection:
        at = rfc3339(utcnow())
        path = f"/apis/sim.gpupoc.io/v1/nodes/{node}/{action}"
        r = self.admin.call("POST", path, body={})
        return Injection(method="sim-endpoint", action=action, target=node, at=at, by=self.by,
                         command=f"POST {path}", ok=r.ok,
                         detail=f"HTTP {r.status}" + ("" if r.ok else f": {r.message}"))

    def fail(self, node: str) -> Injection:
        return self._do(node, "fail")

    def recover(self, node: str) -> Injection:
        return self._do(node, "recover")


@dataclass
class CommandInjector:
    """Operator-provided commands with ``{node}`` placeholders, e.g. a BMC power-off and power-on."""

    fail_command: str
    recover_command: str = ""
    by: str = "operator"
    method: str = "command"
    timeout_s: float = 300.0

    def _run(self, template: str, node: str, action: str) -> Injection:
        at = rfc3339(utcnow())
        if not template:
            return Injection(method=self.method, action=action, target=node, at=at, by=self.by, ok=False,
                             detail=f"no {action} command configured")
        cmd = template.format(node=shlex.quote(node))
        try:
            p = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=self.timeout_s)
            ok, detail = p.returncode == 0, f"exit {p.returncode}: {(p.stdout + p.stderr).strip()[-500:]}"
        except subprocess.TimeoutExpired:
            ok, detail = False, f"timed out after {self.timeout_s:g}s"
        return Injection(method=self.method, action=action, target=node, at=at, by=self.by, command=cmd, ok=ok,
                         detail=detail)

    def fail(self, node: str) -> Injection:
        return self._run(self.fail_command, node, "fail")

    def recover(self, node: str) -> Injection:
        return self._run(self.recover_command, node, "recover")


def kubectl_drain_injector(kubeconfig: str, context: str, by: str = "operator") -> CommandInjector:
    """``kubectl cordon`` + ``drain`` (a planned node loss on a real cluster), ``uncordon`` to recover."""
    k = f"kubectl --kubeconfig {shlex.quote(kubeconfig)} --context {shlex.quote(context)}"
    return CommandInjector(
        f"{k} cordon {{node}} && {k} drain {{node}} --ignore-daemonsets --delete-emptydir-data --force "
        "--grace-period=10 --timeout=120s", f"{k} uncordon {{node}}", by=by, method="kubectl-drain")
