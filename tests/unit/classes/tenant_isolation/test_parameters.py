"""The tenant-isolation class's own suite parameters say whether the plan defines a fair share and a reclaim."""

from __future__ import annotations

from types import SimpleNamespace

from gpupoc.classes.registry import definition
from gpupoc.classes.tenant_isolation.parameters import suite_parameters


def test_a_plan_without_a_fair_share_or_a_reclaim_provokes_neither():
    assert suite_parameters(SimpleNamespace(fair_share=None, reclaim=None)) == {
        "fair_share_defined": False, "reclaim_defined": False}


def test_a_plan_with_both_provokes_both_and_the_class_definition_names_them():
    spec = SimpleNamespace(fair_share=object(), reclaim=object())
    assert definition("tenant_isolation").suite_parameters(spec) == {"fair_share_defined": True,
                                                                     "reclaim_defined": True}
    assert definition("queue_congestion").suite_parameters is None
