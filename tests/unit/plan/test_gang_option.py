"""platform.options.gangs: the Workload API's gangs are kube-scheduler's; another adapter is refused by name."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gpupoc.common.priority import gangs_placed_whole
from gpupoc.plan.model import Platform


def platform(adapter: str, gangs: str) -> Platform:
    return Platform.model_validate({"name": "p", "kubeconfig": "k", "adapter": adapter, "options": {"gangs": gangs}})


def test_workload_api_gangs_are_for_kube_scheduler():
    assert platform("kube-scheduler", "workload-api").workload_api_gangs
    with pytest.raises(ValidationError, match="options.gangs: workload-api.*'volcano' has its own grouping"):
        platform("volcano", "workload-api")
    with pytest.raises(ValidationError):
        platform("kube-scheduler", "podgroups")


def test_kube_scheduler_places_gangs_whole_only_through_the_workload_api():
    assert not gangs_placed_whole("kube-scheduler", "adapter")
    assert gangs_placed_whole("kube-scheduler", "workload-api")
    assert gangs_placed_whole("kueue") and gangs_placed_whole("volcano", "adapter")
