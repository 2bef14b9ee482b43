"""The tenant-isolation class's own suite parameters: which of its cases the plan provokes. They are the
``requires`` flags of FS-01 (``fair_share_defined``) and RCL-01, RCL-02 (``reclaim_defined``); stored with the run
beside the shared ones (``steps/finish.py`` ``suite_parameters``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from gpupoc.plan.classes import TenantIsolation


def suite_parameters(spec: TenantIsolation) -> dict[str, bool]:
    """Whether the plan defines a fair share to measure and a reclaim to provoke."""
    return {"fair_share_defined": spec.fair_share is not None, "reclaim_defined": spec.reclaim is not None}
