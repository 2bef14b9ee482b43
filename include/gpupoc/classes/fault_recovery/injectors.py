"""Node failure injection, pluggable and recorded, chosen per injection in the plan
(``gpupoc.plan.injector_spec``): the simulator's admin endpoint, an operator's commands, a ``NoExecute`` taint,
or ``kubectl cordon`` + ``drain``. ``build_injector`` makes the plan's choice.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from pydantic import BaseModel

from gpupoc.common.timefmt import rfc3339, utcnow
from gpupoc.controlplane.binaries import kubectl_command
from gpupoc.evidence.scrub import scrub_text
from gpupoc.pipeline.k8s import KubeCaller

# Injection methods that make the node itself fail (Kubernetes then records NodeNotReady Warning events); a
# taint or a drain leaves the node up and evicts its pods only.
NODE_LOSS_METHODS = ("sim-endpoint", "command")
EVICTION_METHODS = ("taint", "kubectl-drain")
SIM_ELSEWHERE = ("this API server has no sim.gpupoc.io endpoint, so it is not the simulated cluster: injector "
                 "method 'sim' works only there; choose command (on the real control plane: fail `gpupoc "
                 "controlplane node-stop {node}`, recover `gpupoc controlplane node-start {node}`), taint or drain")


class Injection(BaseModel):
    """One action the pipeline took to provoke (or undo) a failure."""

    method: str  # sim-endpoint | command | taint | kubectl-drain | workload-spec | pipeline-delete
    action: str
    target: str
    at: str
    by: str
    command: str = ""
    ok: bool = True
    detail: str = ""


class NodeInjector(Protocol):
    method: str  # what the record names as the trigger method

    def fail(self, node: str) -> Injection: ...

    def recover(self, node: str) -> Injection: ...


@dataclass
class SimNodeInjector:
    """The simulated cluster's admin endpoint ``POST /apis/sim.gpupoc.io/v1/nodes/{name}/fail|recover``."""

    admin: KubeCaller
    by: str = "kubernetes-admin"
    method: str = "sim-endpoint"

    def _do(self, node: str, action: str) -> Injection:
        at = rfc3339(utcnow())
        path = f"/apis/sim.gpupoc.io/v1/nodes/{node}/{action}"
        r = self.admin.call("POST", path, body={})
        detail = f"HTTP {r.status}" + ("" if r.ok else f": {r.message}")
        if r.status == 404 and not (r.message or "").startswith('nodes "'):  # no endpoint, not no such node
            detail += f"; {SIM_ELSEWHERE}"
        return Injection(method="sim-endpoint", action=action, target=node, at=at, by=self.by,
                         command=f"POST {path}", ok=r.ok, detail=detail)

    def fail(self, node: str) -> Injection:
        return self._do(node, "fail")

    def recover(self, node: str) -> Injection:
        return self._do(node, "recover")


def render(template: str, values: dict[str, str]) -> str:
    """``template`` with ``{name}`` replaced by the shell-quoted value for each known name only (other braces,
    e.g. awk's, are left alone)."""
    out = template
    for name, value in values.items():
        out = out.replace("{" + name + "}", shlex.quote(value))
    return out


@dataclass
class CommandInjector:
    """Operator-provided commands with ``{node}`` (and ``{kubeconfig}``, ``{context}``) placeholders, e.g.
    stopping the kubelet over SSH or a BMC power-off. They run in ``cwd`` (the plan's directory) with this
    interpreter's directory first on PATH (so ``gpupoc`` and ``kubectl`` beside it are found)."""

    fail_command: str
    recover_command: str = ""
    by: str = "operator"
    method: str = "command"
    timeout_s: float = 300.0
    values: dict[str, str] | None = None  # placeholder -> value, besides {node}
    cwd: str | None = None

    def _run(self, template: str, node: str, action: str) -> Injection:
        at = rfc3339(utcnow())
        if not template:
            return Injection(method=self.method, action=action, target=node, at=at, by=self.by, ok=False,
                             detail=f"no {action} command configured")
        cmd = render(template, {**(self.values or {}), "node": node})
        env = {**os.environ, "PATH": os.pathsep.join([str(Path(sys.executable).parent), os.environ.get("PATH", "")])}
        try:
            p = subprocess.run(cmd, shell=True, capture_output=True, text=True, timeout=self.timeout_s, env=env,
                               cwd=self.cwd)
            ok, detail = p.returncode == 0, f"exit {p.returncode}: {(p.stdout + p.stderr).strip()[-500:]}"
        except subprocess.TimeoutExpired:
            ok, detail = False, f"timed out after {self.timeout_s:g}s"
        return Injection(method=self.method, action=action, target=node, at=at, by=self.by,
                         command=scrub_text(cmd), ok=ok, detail=scrub_text(detail))

    def fail(self, node: str) -> Injection:
        return self._run(self.fail_command, node, "fail")

    def recover(self, node: str) -> Injection:
        return self._run(self.recover_command, node, "recover")


def kubectl_drain_injector(kubeconfig: str | None, context: str | None, by: str = "operator",
                           grace_period_s: int | None = None, timeout_s: int = 120) -> CommandInjector:
    """``kubectl cordon`` + ``drain`` (evictions through the Eviction API: planned maintenance, not a failure),
    ``uncordon`` to recover. Without a kubeconfig kubectl uses its in-cluster service account. The kubectl is the
    one ``make control-plane`` built when present (the real control plane's version), else the machine's."""
    k = shlex.quote(kubectl_command()) + (f" --kubeconfig {shlex.quote(kubeconfig)}" if kubeconfig else "") + \
        (f" --context {shlex.quote(context)}" if context and kubeconfig else "")
    grace = f" --grace-period={grace_period_s}" if grace_period_s is not None else ""
    return CommandInjector(
        f"{k} cordon {{node}} && {k} drain {{node}} --ignore-daemonsets --delete-emptydir-data --force"
        f"{grace} --timeout={timeout_s}s", f"{k} uncordon {{node}}", by=by, method="kubectl-drain",
        timeout_s=timeout_s + 30.0)


@dataclass
class TaintInjector:
    """A ``NoExecute`` taint on the node through the API (``PATCH nodes/{node}`` as the administrator): the
    taint-eviction controller evicts the pods that do not tolerate it, as it does a lost node's; recovery
    removes the taint. The node itself stays up."""

    admin: KubeCaller
    key: str
    value: str = ""
    by: str = "kubernetes-admin"
    method: str = "taint"

    def _patch(self, node: str, action: str) -> Injection:
        at = rfc3339(utcnow())
        path = f"/api/v1/nodes/{node}"
        shown = f"{self.key}{'=' + self.value if self.value else ''}:NoExecute"
        got = self.admin.call("GET", path)
        if not got.ok or not isinstance(got.body, dict):
            return Injection(method="taint", action=action, target=node, at=at, by=self.by, command=f"GET {path}",
                             ok=False, detail=f"HTTP {got.status}: {got.message}")
        taints = [t for t in (got.body.get("spec") or {}).get("taints") or []
                  if not (t.get("key") == self.key and t.get("effect") == "NoExecute")]
        if action == "fail":
            taints.append({"key": self.key, "value": self.value, "effect": "NoExecute", "timeAdded": at})
        r = self.admin.call("PATCH", path, body={"spec": {"taints": taints or None}})
        verb = "add" if action == "fail" else "remove"
        return Injection(method="taint", action=action, target=node, at=at, by=self.by,
                         command=f"PATCH {path} ({verb} taint {shown})", ok=r.ok,
                         detail=f"HTTP {r.status}" + ("" if r.ok else f": {r.message}"))

    def fail(self, node: str) -> Injection:
        return self._patch(node, "fail")

    def recover(self, node: str) -> Injection:
        return self._patch(node, "recover")


def build_injector(spec, admin: KubeCaller, *, kubeconfig: str | None, context: str | None,
                   cwd: str | None = None, by: str = "kubernetes-admin") -> NodeInjector:
    """The injector the plan chose (``gpupoc.plan.injector_spec``) for this platform."""
    method = spec.method
    if method == "sim":
        return SimNodeInjector(admin, by=by)
    if method == "taint":
        return TaintInjector(admin, spec.key, spec.value, by=by)
    if method == "drain":
        return kubectl_drain_injector(kubeconfig, context, by=by, grace_period_s=spec.grace_period_seconds,
                                      timeout_s=spec.timeout_seconds)
    values = {"kubeconfig": kubeconfig or "", "context": context or ""}
    return CommandInjector(spec.fail, spec.recover or "", by="operator", timeout_s=float(spec.timeout_seconds),
                           values=values, cwd=cwd)
