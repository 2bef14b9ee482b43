"""``admission-refused``: a validating admission webhook (``sim/admission_webhook.py`` ``RefusingWebhook``)
answers the first gated, bare, 1-GPU pod's creation with the API server's 403 and the webhook's message."""

from __future__ import annotations

from gpupoc.sim.admission_webhook import RefusingWebhook
from gpupoc.sim.cluster import ClusterState


def install(state: ClusterState) -> None:
    """Register the webhook on the API server's validating admission (``state.hooks.validating``), once."""
    if not any(isinstance(v, RefusingWebhook) for v in state.hooks.validating):
        state.hooks.validating.append(RefusingWebhook())
