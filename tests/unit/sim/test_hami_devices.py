"""HAMi's vGPU accounting in isolation: requests, the card fit's reason words, placement policies, formats."""

from __future__ import annotations

import json

from gpupoc.kube import hami as HAMI
from gpupoc.kube.resources import GPU, GPUCORES, GPUMEM, GPUMEM_PERCENTAGE
from gpupoc.sim import hami_devices as H


def card(index: int = 0, **kw) -> H.Card:
    base = dict(uuid=f"GPU-{index}", index=index, node="n", type="NVIDIA-NVIDIA L40S", count=10, total_mem=46068)
    return H.Card(**{**base, **kw})


def test_requests_read_limits_and_default_to_the_whole_card():
    pod = {"spec": {"containers": [
        {"name": "a", "resources": {"limits": {GPU: "1", GPUMEM: "3000", GPUCORES: "30"}}},
        {"name": "cpu", "resources": {"limits": {"cpu": "1"}}},
        {"name": "b", "resources": {"requests": {GPU: "2"}, "limits": {GPUMEM_PERCENTAGE: "25"}}}]}}
    a, b = H.requests_of(pod)
    assert (a.container, a.nums, a.memory_on(46068), a.cores) == ("a", 1, 3000, 30)
    assert (b.container, b.nums, b.memory_on(46068)) == ("b", 2, 11517)
    assert H.Request("c", 1).memory_on(46068) == 46068


def test_card_reasons_follow_hamis_fit_order():
    req = H.Request("a", 1, mem_mib=3000, cores=20)
    assert H.card_reason(card(), req, {}) is None
    assert H.card_reason(card(), req, {HAMI.USE_GPUTYPE: "A100"}) == HAMI.CARD_TYPE_MISMATCH
    assert H.card_reason(card(), req, {HAMI.NOUSE_GPUTYPE: "L40S"}) == HAMI.CARD_TYPE_MISMATCH
    assert H.card_reason(card(), req, {HAMI.USE_GPUUUID: "GPU-9"}) == HAMI.CARD_UUID_MISMATCH
    assert H.card_reason(card(healthy=False), req, {}) == HAMI.CARD_NOT_HEALTH
    assert H.card_reason(card(used=10), req, {}) == HAMI.CARD_TIME_SLICING_EXHAUSTED
    assert H.card_reason(card(used_mem=44000), req, {}) == HAMI.CARD_INSUFFICIENT_MEMORY
    assert H.card_reason(card(used=1, used_cores=90), req, {}) == HAMI.CARD_INSUFFICIENT_CORE
    assert H.card_reason(card(used=1), H.Request("a", 1, 1000, cores=100), {}) == HAMI.EXCLUSIVE_CONFLICT


def test_fit_node_says_why_with_gen_reason_counts():
    cards = [card(0, used_mem=45000), card(1, used=10)]
    fit = H.fit_node("n", cards, [H.Request("a", 1, mem_mib=3000)], {}, H.Policy.SPREAD, H.Policy.BINPACK)
    assert not fit.fits
    assert fit.reason == "1/2 CardInsufficientMemory, 1/2 CardTimeSlicingExhausted"
    assert H.reason_words(fit) == ["CardInsufficientMemory", "CardTimeSlicingExhausted"]
    many = H.fit_node("n", cards, [H.Request("a", 3)], {}, H.Policy.SPREAD, H.Policy.BINPACK)
    assert many.reason == HAMI.NODE_INSUFFICIENT_DEVICE
    assert cards[0].used_mem == 45000  # the node's cards are not consumed by a trial fit


def test_binpack_fills_the_busiest_card_and_spread_the_emptiest():
    cards = [card(0), card(1, used=1, used_mem=3000)]
    req = [H.Request("a", 1, mem_mib=1000)]
    packed = H.fit_node("n", cards, req, {}, H.Policy.BINPACK, H.Policy.BINPACK)
    spread = H.fit_node("n", cards, req, {}, H.Policy.SPREAD, H.Policy.BINPACK)
    assert packed.devices[0][0].uuid == "GPU-1" and spread.devices[0][0].uuid == "GPU-0"


def test_overcommit_skips_only_the_memory_check():
    cards = [card(0, used_mem=45000)]
    req = [H.Request("a", 1, mem_mib=3000)]
    assert not H.fit_node("n", cards, req, {}, H.Policy.SPREAD, H.Policy.BINPACK).fits
    assert H.fit_node("n", cards, req, {}, H.Policy.SPREAD, H.Policy.BINPACK, overcommit=True).fits


def test_device_lists_round_trip_in_hamis_format():
    devices = [[H.Grant("GPU-a", "NVIDIA", 3000, 0)], [H.Grant("GPU-b", "NVIDIA", 1000, 30),
                                                       H.Grant("GPU-c", "NVIDIA", 1000, 30)]]
    text = H.encode_pod_devices(devices)
    assert text == "GPU-a,NVIDIA,3000,0:;GPU-b,NVIDIA,1000,30:GPU-c,NVIDIA,1000,30:;"
    assert H.decode_pod_devices(text) == devices
    assert H.decode_pod_devices("") == [] and H.decode_pod_devices("garbage;") == [[]]


def test_messages_are_hamis():
    failed = [H.NodeFit("b", reasons={"CardInsufficientMemory": 4}, reason="4/4 CardInsufficientMemory"),
              H.NodeFit("a", reasons={"CardInsufficientMemory": 1, "CardTypeMismatch": 3}, reason="x")]
    assert H.failure_events(failed) == ["2 nodes CardInsufficientMemory(a,b)", "1 nodes CardTypeMismatch(a)"]
    assert H.success_message(3, "a", [H.NodeFit("a", score=1.234)]) == (
        "find fit node(a), 2 nodes not fit, 1 nodes fit(a:1.23)")
    assert H.binding_message("a", "ns", "p") == "Successfully binding node [a] to ns/p"
    assert H.no_node_message(2) == "no available node, 2 nodes do not meet"


def test_register_annotation_is_the_device_plugins_json():
    entry = json.loads(H.register_annotation([card(0)]))[0]
    assert entry == {"id": "GPU-0", "index": 0, "count": 10, "devmem": 46068, "devcore": 100,
                     "type": "NVIDIA-NVIDIA L40S", "numa": 0, "mode": "hami-core", "health": True}


def test_an_unknown_policy_annotation_keeps_the_default():
    assert H.policy_of({HAMI.GPU_POLICY: "binpack"}, HAMI.GPU_POLICY, H.Policy.SPREAD) == H.Policy.BINPACK
    assert H.policy_of({HAMI.GPU_POLICY: "densest"}, HAMI.GPU_POLICY, H.Policy.SPREAD) == H.Policy.SPREAD
