"""Whether the plan's platform is the simulated cluster (``gpupoc sim serve``) or a real one."""

from __future__ import annotations

from gpupoc.plan.document import Plan
from gpupoc.plan.files import in_sim_data_dir


def is_simulated(plan: Plan) -> bool:
    """``platform.simulated`` when set; else True when the kubeconfig lies in a simulated cluster's data
    directory (``gpupoc sim serve`` writes it there). A connection id or in-cluster access is a real cluster."""
    if plan.platform.simulated is not None:
        return plan.platform.simulated
    path = plan.kubeconfig_path
    return path is not None and in_sim_data_dir(path)
