"""A validating admission webhook that refuses one pod's creation (the ``admission-refused`` fault's).

The first pod created behind a scheduling gate, owned by nothing and asking for exactly one GPU (a wave's
single-GPU workload, before its release) is answered as the API server answers a webhook's denial: HTTP 403
``admission webhook "<name>" denied the request: <its message>``. Every other pod, and that pod's retries under
other names, are let through: one item of the wave is refused, and ends with the platform's message. The
fault profile (``fault_profiles/admission_refused.py``) registers it on ``state.hooks.validating``, run by
``sim/admission.py`` ``admit_pod``.
"""

from __future__ import annotations

from decimal import Decimal

from gpupoc.kube.resources import GPU
from gpupoc.sim import quota
from gpupoc.sim.api.status import StatusError

WEBHOOK = "validate.gpu-policy.platform.local"
POLICY = "gpu-placement-policy"


def denial(pod: dict) -> StatusError:
    """The API server's answer to the webhook's denial of ``pod`` (``webhookerrors.ToStatusErr``)."""
    meta = pod["metadata"]
    message = (f'admission webhook "{WEBHOOK}" denied the request: [{POLICY}] pod {meta["namespace"]}/'
               f'{meta["name"]} asks for 1 {GPU} and no pool of the policy accepts it')
    return StatusError(403, message, "Forbidden")


def is_target(pod: dict) -> bool:
    """A gated pod owned by nothing that asks for exactly one GPU."""
    meta, spec = pod.get("metadata") or {}, pod.get("spec") or {}
    return (bool(spec.get("schedulingGates")) and not meta.get("ownerReferences")
            and quota.pod_requests(pod).get(f"requests.{GPU}") == Decimal(1))


class RefusingWebhook:
    """Refuses the first pod ``is_target`` picks (``ValidatingPlugin``)."""

    def __init__(self) -> None:
        self.refused: tuple[str, str] | None = None  # (namespace, name) once refused

    def validate(self, pod: dict) -> None:
        if self.refused is None and is_target(pod):
            self.refused = (pod["metadata"]["namespace"], pod["metadata"]["name"])
            raise denial(pod)
