"""How a node failure is provoked (``test_classes.fault_recovery.injections[].injector``), chosen per injection:

- ``sim``: the simulated cluster's admin endpoint (only there; ``gpupoc plan validate`` refuses it elsewhere);
- ``command``: the operator's own fail and recover commands (``{node}`` is the node), e.g. stopping the kubelet
  over SSH, a BMC power-off, a chaos tool;
- ``taint``: a ``NoExecute`` taint on the node, so the taint-eviction controller evicts its pods as it does a
  failed node's; the node itself stays up;
- ``drain``: ``kubectl drain``, evictions through the Eviction API: planned maintenance, reported as an eviction
  (scenario ``node_drain``), not a failure.
"""

from __future__ import annotations

import re
from typing import Annotated, Literal, Union

from pydantic import Field, field_validator

from gpupoc.common.fields import NonNegativeInt, PositiveInt, StrictModel

# The default taint of the ``taint`` injector. Not ``node.kubernetes.io/unreachable``: the node lifecycle
# controller takes that one off a node whose Ready condition is True at its next pass (``markNodeAsReachable``),
# and every pod tolerates it for 300 s (DefaultTolerationSeconds), so on a healthy node it evicts nothing.
INJECTED_TAINT = "gpupoc.io/injected-node-failure"
PLACEHOLDERS = ("node", "kubeconfig", "context")
_QUALIFIED = re.compile(r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?"
                        r"[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$")


class SimInjector(StrictModel):
    """``POST /apis/sim.gpupoc.io/v1/nodes/{node}/fail|recover`` on the simulated cluster."""

    method: Literal["sim"] = "sim"


class CommandInjector(StrictModel):
    """The operator's commands, run by a shell in the plan's directory; ``{node}``, ``{kubeconfig}`` and
    ``{context}`` are replaced (the node name, the plan's kubeconfig path and admin context), shell-quoted."""

    method: Literal["command"]
    fail: str = Field(min_length=1, description="fails the node, e.g. ssh {node} sudo systemctl stop kubelet")
    recover: str | None = Field(default=None, description="brings it back, e.g. ssh {node} sudo systemctl start "
                                "kubelet; unset: the node is not recovered by the pipeline")
    timeout_seconds: PositiveInt = Field(default=300, description="longest a command may run")

    @field_validator("fail")
    @classmethod
    def _names_the_node(cls, v: str) -> str:
        if "{node}" not in v:
            raise ValueError("the fail command must contain {node} (the node to fail)")
        return v


class TaintInjector(StrictModel):
    """A ``NoExecute`` taint the pods do not tolerate (unless the pool's tolerations say otherwise); recovery
    removes it."""

    method: Literal["taint"]
    key: str = Field(default=INJECTED_TAINT, description="taint key (default gpupoc.io/injected-node-failure)")
    value: str = ""

    @field_validator("key")
    @classmethod
    def _qualified_key(cls, v: str) -> str:
        if not _QUALIFIED.match(v):
            raise ValueError(f"expected a taint key such as {INJECTED_TAINT!r} (an optional DNS prefix and a "
                             "name of at most 63 characters)")
        return v


class DrainInjector(StrictModel):
    """``kubectl cordon`` + ``drain`` (Eviction API, honouring PodDisruptionBudgets); ``uncordon`` recovers."""

    method: Literal["drain"]
    grace_period_seconds: NonNegativeInt | None = Field(
        default=None, description="kubectl drain --grace-period (default: each pod's own)")
    timeout_seconds: PositiveInt = Field(default=120, description="kubectl drain --timeout")


NodeInjector = Annotated[Union[SimInjector, CommandInjector, TaintInjector, DrainInjector],
                         Field(discriminator="method")]
METHODS = ("sim", "command", "taint", "drain")


def injector_shorthand(value: object) -> object:
    """``injector: taint`` means ``injector: {method: taint}``."""
    return {"method": value} if isinstance(value, str) else value
