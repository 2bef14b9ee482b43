"""Many items' pod bodies at once: each equal to its own build, on every shipped plan, adapter and class (a
shared build must never leak one item's name, gang or replayed job into another's pod)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpupoc.plan import class_items, load_plan
from gpupoc.common.test_classes import TestClass
from gpupoc.podspec.bodies import pod_bodies, pod_body
from gpupoc.podspec.labels import ITEM

PLANS = sorted((Path(__file__).resolve().parents[3] / "plans").glob("*.yaml"))
RUN = "manual__2026-12-01T09:00:00+00:00"


def every_plan():
    for path in PLANS:
        try:
            yield path.name, load_plan(path)
        except Exception:  # noqa: BLE001 - a cluster file or a plan that needs its history elsewhere
            continue


@pytest.mark.parametrize("name,plan", list(every_plan()), ids=lambda v: v if isinstance(v, str) else "")
def test_every_items_body_is_its_own_build_on_every_shipped_plan(name, plan):
    checked = 0
    for tc in TestClass:
        items = class_items(plan, tc)[:400]  # the scale plan's first 400 cover its shapes
        if not items:
            continue
        bodies = pod_bodies(plan, items, run_id=RUN, test_class=tc.value)
        for item, body in zip(items, bodies):
            assert body == pod_body(plan, item, run_id=RUN, test_class=tc.value), (name, tc, item.name)
        checked += len(items)
    assert checked, f"{name}: no item checked"


def test_items_of_one_shape_get_their_own_name_and_item_annotation_in_separate_documents(plan_for):
    plan = plan_for("kueue")
    items = [i for i in class_items(plan, "queue_congestion") if i.gang is None][:3]
    shapes = {(i.workload, i.tenant, i.priority_class, i.role) for i in items}
    bodies = pod_bodies(plan, [items[0], items[0].__class__(**{**items[0].to_dict(), "name": "other"})],
                        run_id=RUN, test_class="queue_congestion")
    assert shapes and [b["metadata"]["name"] for b in bodies] == [items[0].name, "other"]
    assert [b["metadata"]["annotations"][ITEM] for b in bodies] == [items[0].name, "other"]
    bodies[0]["metadata"]["labels"]["x"] = "y"
    assert "x" not in bodies[1]["metadata"]["labels"], "two items share one document"
