"""The state one scenario run carries between its steps: the identities, the target node, the result and the
requests whose audit records are looked up at the end."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpupoc.fidelity.client import Kube
from gpupoc.fidelity.model import ScenarioResult, StepRecord
from gpupoc.fidelity.setup import Target


@dataclass(frozen=True)
class AuditMark:
    """A request a step made, to find in the audit log: (verb, resource, subresource, namespace, name, user)."""

    step: str
    label: str
    verb: str
    resource: str
    namespace: str = ""
    name: str = ""
    subresource: str = ""
    user: str = ""


@dataclass
class Run:
    """One run of the scenario on one cluster."""

    admin: Kube
    tenant: Kube
    tenant_user: str
    target: Target
    result: ScenarioResult
    marks: list[AuditMark] = field(default_factory=list)
    wait: float = 90.0

    def rec(self, step: str) -> StepRecord:
        return self.result.record(step)

    def mark(self, step: str, label: str, verb: str, resource: str, namespace: str = "", name: str = "",
             subresource: str = "", tenant: bool = False) -> None:
        self.marks.append(AuditMark(step, label, verb, resource, namespace, name, subresource,
                                    self.tenant_user if tenant else ""))

    @property
    def nodes(self) -> list[str]:
        return self.target.nodes
