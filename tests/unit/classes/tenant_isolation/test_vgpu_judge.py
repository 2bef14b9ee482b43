"""The vGPU slices probe's pure parts: HAMi's formats, each card's grants, the probe pods' views, the verdict."""

from __future__ import annotations

import json
from datetime import datetime, timedelta, timezone

from gpupoc.classes.tenant_isolation import vgpu_judge as V

CARD, OTHER = "GPU-aaaa", "GPU-bbbb"
T0 = datetime(2026, 12, 1, 10, 0, 0, tzinfo=timezone.utc)


def node(name="inference-node-1", cards=((CARD, 46068), (OTHER, 46068)), legacy=False) -> dict:
    register = (":".join(f"{u},10,{m},100,NVIDIA-NVIDIA L40S,0,true" for u, m in cards) + ":" if legacy else
                json.dumps([{"id": u, "index": i, "count": 10, "devmem": m, "devcore": 100} for i, (u, m) in
                            enumerate(cards)]))
    return {"metadata": {"name": name, "annotations": {"hami.io/node-nvidia-register": register}},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}


def pod(name, grants, phase="Running", ns="team-vision", scheduled=T0, finished=None, waiting=None) -> dict:
    annotations = {V.ALLOCATED: "".join(f"{u},NVIDIA,{m},0:" for u, m in grants) + ";"} if grants else {}
    cond = ({"type": "PodScheduled", "status": "True", "lastTransitionTime": f"{scheduled:%Y-%m-%dT%H:%M:%SZ}"}
            if grants else {"type": "PodScheduled", "status": "False", "reason": "Unschedulable", "message": waiting})
    status = {"phase": phase, "conditions": [cond]}
    if finished:
        status["containerStatuses"] = [{"name": "base", "state": {"terminated": {
            "exitCode": 0, "finishedAt": f"{finished:%Y-%m-%dT%H:%M:%SZ}"}}}]
    return {"metadata": {"namespace": ns, "name": name, "annotations": annotations},
            "spec": {"nodeName": "inference-node-1" if grants else None}, "status": status}


def test_hamis_device_lists_are_read_and_sliced_nodes_found():
    assert V.decode_grants(f"{CARD},NVIDIA,3000,30:{OTHER},NVIDIA,2000,0:;;") == [
        V.Grant(CARD, 3000, 30), V.Grant(OTHER, 2000, 0)]
    assert V.decode_grants(None) == [] and V.decode_grants("garbage") == []
    assert V.sliced_nodes([node(), {"metadata": {"name": "plain"}}]) == [node()]


def test_a_card_is_over_when_its_holding_pods_were_granted_more_than_it_has():
    pods = [pod("a", [(CARD, 27640)]), pod("b", [(CARD, 27640)], ns="team-nlp"),
            pod("done", [(OTHER, 40000)], phase="Succeeded")]
    by = {a.uuid: a for a in V.card_allocations(pods, [node()])}
    assert by[CARD].allocated_mib == 55280 and by[CARD].over and by[CARD].pods == ("team-vision/a", "team-nlp/b")
    assert by[OTHER].allocated_mib == 0 and not by[OTHER].over  # a finished pod holds nothing


def test_a_probe_pod_is_read_for_its_card_placement_end_and_waiting_reason():
    ended = V.slice_pod("team-vision", pod("a", [(CARD, 27640)], phase="Succeeded", finished=T0), 27640)
    assert (ended.uuid, ended.placed_at, ended.finished_at, ended.ended) == (CARD, T0, T0, True)
    waits = V.slice_pod("team-nlp", pod("b", [], phase="Pending", waiting="0/5 nodes are available: 1 "
                                             "4/4 CardInsufficientMemory"), 27640)
    assert not waits.placed and "CardInsufficientMemory" in waits.waiting and waits.placed_at is None


def observed(second, second_end=None, first_end=None, allocations=None, limit=30.0) -> V.Observed:
    first = V.SlicePod("team-vision", "a", 27640, "Running", CARD, T0)
    return V.Observed("inference-node-1", 46068, first, second,
                      allocations if allocations is not None else [V.CardAllocation(CARD, "n", 46068, 27640, ("a",))],
                      first_end or V.SlicePod("team-vision", "a", 27640, "Succeeded", CARD, T0,
                                              T0 + timedelta(seconds=45)),
                      second_end or second, limit, T0)


WAITING = V.SlicePod("team-nlp", "b", 27640, "Pending", waiting="1 4/4 CardInsufficientMemory")


def test_the_second_slice_waiting_then_placed_soon_after_the_first_ended_passes_both():
    placed = V.SlicePod("team-nlp", "b", 27640, "Running", CARD, T0 + timedelta(seconds=46))
    row = V.judge(observed(WAITING, placed))
    assert row.overcommitted is False and row.slice_released is True and row.slice_release_seconds == 1.0
    assert row.second_waiting_message == "1 4/4 CardInsufficientMemory" and row.finding is None


def test_the_second_slice_placed_beside_the_first_is_an_overcommit():
    both = [V.CardAllocation(CARD, "inference-node-1", 46068, 55280, ("team-vision/a", "team-nlp/b"))]
    row = V.judge(observed(V.SlicePod("team-nlp", "b", 27640, "Running", CARD, T0), allocations=both))
    assert row.overcommitted is True and row.slice_released is None and row.card_allocated_mib == 55280
    assert row.finding.startswith("overcommit:") and "55280 of 46068 MiB" in row.cards_overcommitted


def test_a_slice_still_counted_after_its_pod_ended_is_a_leak():
    row = V.judge(observed(WAITING))
    assert row.overcommitted is False and row.slice_released is False and row.slice_release_seconds is None
    assert row.finding.startswith("slice leak:") and "CardInsufficientMemory" in row.finding
    late = V.SlicePod("team-nlp", "b", 27640, "Running", CARD, T0 + timedelta(seconds=120))
    slow = V.judge(observed(WAITING, late))
    assert slow.slice_released is False and slow.slice_release_seconds == 75.0


def test_the_probe_cannot_tell_when_the_first_slice_ended_before_the_answer_or_never_ran():
    early = observed(WAITING)
    early = V.Observed(**{**vars(early), "first": V.SlicePod("team-vision", "a", 27640, "Succeeded", CARD, T0)})
    row = V.judge(early)
    assert row.overcommitted is None and row.slice_released is None and "ended before" in row.reason
    never = V.Observed(**{**vars(early), "first": V.SlicePod("team-vision", "a", 27640, "Pending")})
    assert V.judge(never).overcommitted is None and "never placed" in V.judge(never).reason
    assert V.not_sliced_row("none").memory_slices is False
