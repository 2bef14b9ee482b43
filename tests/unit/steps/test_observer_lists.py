"""The observer's watched lists handed to collection: saved a file per list at the observer's end, resumed by
collection without listing the wave again."""

from __future__ import annotations

from gpupoc.pipeline.watch_cache import WatchingCaller
from gpupoc.steps import collect as collect_step
from gpupoc.steps import wave as wave_step
from gpupoc.pipeline.watch_resume import saved_collections, saved_records
from gpupoc.steps.markers import OBSERVED_PODS, OBSERVER_LISTS
from tests.unit.pipeline.test_watch_cache import PODS, FakeServer, lists, pod, wait_until

BOOKMARK = {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "11"}}}


class ByPath(FakeServer):
    """Each collection's catch-up watch plays its path's script (a bookmark alone for any other path)."""

    def __init__(self, scripts: dict[str, list[dict]]):
        super().__init__([])
        self.scripts = scripts

    def stream(self, path, query, read_timeout_s, handle):
        self.requests.append(("WATCH", path, tuple(query)))
        yield from self.scripts.get(path, [BOOKMARK])


def _observer(objects: list[dict]) -> WatchingCaller:
    server = FakeServer([], objects=objects, rv="10")
    caller = WatchingCaller(server)
    caller.call("GET", PODS, query={"labelSelector": "wave=w1"})
    caller.call("GET", "/api/v1/namespaces/team-a/events")
    wait_until(server.done.is_set)
    caller.close()
    return caller


def _hand_over(ctx, caller: WatchingCaller) -> list[dict]:
    """What the observer does at its end: its lists saved, its pods saved, then the lists named."""
    seen: dict[str, dict] = {}
    entries = wave_step.save_lists(ctx, caller, seen)
    ctx.writer.write_json_items(OBSERVED_PODS, list(seen.values()))
    if entries:
        ctx.writer.write_json(OBSERVER_LISTS, entries)
    return entries


def _resumed_pods(ctx, monkeypatch, server) -> list[tuple[str, str]]:
    monkeypatch.setattr(ctx, "reader", lambda: server)
    got = collect_step.resumed_lists(ctx).call("GET", PODS, query={"labelSelector": "wave=w1"}).body["items"]
    return sorted((p["metadata"]["name"], p["status"]["phase"]) for p in got)


def test_a_large_waves_lists_are_saved_once_and_resumed_by_collection(make_ctx, monkeypatch):
    monkeypatch.setattr(wave_step, "RESUME_FROM_PODS", 2)
    ctx = make_ctx()
    entries = _hand_over(ctx, _observer([pod("p0", "9"), pod("p1", "10")]))
    assert [e["rv"] for e in entries] == ["10", "10"]
    pods, events = entries
    assert pods["pods"] == ["team-a/p0", "team-a/p1"] and "file" not in pods, "the pods were saved twice"
    assert ctx.files(events["file"]).is_file()
    server = ByPath({PODS: [{"type": "MODIFIED", "object": pod("p1", "11", "Succeeded")}, BOOKMARK]})
    assert _resumed_pods(ctx, monkeypatch, server) == [("p0", "Pending"), ("p1", "Succeeded")]
    assert lists(server) == 0


def test_a_pod_list_whose_pods_were_not_saved_is_listed_again(make_ctx, monkeypatch):
    monkeypatch.setattr(wave_step, "RESUME_FROM_PODS", 2)
    ctx = make_ctx()
    _hand_over(ctx, _observer([pod("p0", "9"), pod("p1", "10")]))
    ctx.writer.write_json_items(OBSERVED_PODS, [pod("p0", "9")])  # p1 missing
    server = ByPath({})
    server.objects, server.rv = [pod("p1", "12", "Failed")], "12"
    assert _resumed_pods(ctx, monkeypatch, server) == [("p1", "Failed")]
    assert lists(server) == 1


def test_a_small_wave_saves_nothing_and_collection_lists_as_before(make_ctx, monkeypatch):
    monkeypatch.setattr(wave_step, "RESUME_FROM_PODS", 3)
    ctx = make_ctx()
    assert _hand_over(ctx, _observer([pod("p0", "9"), pod("p1", "10")])) == []
    assert not ctx.files(OBSERVER_LISTS).is_file()
    assert collect_step.resumed_lists(ctx) is None


def test_lists_an_earlier_observer_saved_whole_are_resumed_too(make_ctx, monkeypatch):
    ctx = make_ctx()
    caller = _observer([pod("p0", "9"), pod("p1", "10")])
    names = []
    for i, collection in enumerate(saved_collections(caller, ("pods", "events"))):
        names.append(f"{OBSERVER_LISTS}-{i}")
        ctx.writer.write_json_items(names[-1], saved_records([collection]))
    ctx.writer.write_json(OBSERVER_LISTS, names)
    server = ByPath({PODS: [{"type": "DELETED", "object": pod("p0", "11")}, BOOKMARK]})
    assert _resumed_pods(ctx, monkeypatch, server) == [("p1", "Pending")] and lists(server) == 0


def _resumed_list(ctx, monkeypatch, server) -> list[dict]:
    monkeypatch.setattr(ctx, "reader", lambda: server)
    return collect_step.resumed_lists(ctx).call("GET", PODS, query={"labelSelector": "wave=w1"}).body["items"]


def test_pods_unchanged_since_the_observer_saved_them_are_known_as_its_document(make_ctx, monkeypatch):
    monkeypatch.setattr(wave_step, "RESUME_FROM_PODS", 2)
    ctx = make_ctx()
    _hand_over(ctx, _observer([pod("p0", "9"), pod("p1", "10")]))
    assert ctx.holds_as_observed(_resumed_list(ctx, monkeypatch, ByPath({}))), \
        "a caught-up list with no change is the observer's saved pods (collection copies their file)"
    changed = make_ctx()
    _hand_over(changed, _observer([pod("p0", "9"), pod("p1", "10")]))
    server = ByPath({PODS: [{"type": "MODIFIED", "object": pod("p1", "11", "Succeeded")}, BOOKMARK]})
    assert not changed.holds_as_observed(_resumed_list(changed, monkeypatch, server)), \
        "a pod changed since the observer saved it is written as the cluster now holds it"
