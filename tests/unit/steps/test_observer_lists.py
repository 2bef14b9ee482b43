"""The observer's watched lists handed to collection: saved a file per list at the observer's end, resumed by
collection without listing the wave again."""

from __future__ import annotations

from gpupoc.pipeline.watch_cache import WatchingCaller
from gpupoc.steps import collect as collect_step
from gpupoc.steps import wave as wave_step
from gpupoc.steps.markers import OBSERVER_LISTS
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


def test_a_large_waves_lists_are_saved_a_file_each_and_resumed_by_collection(make_ctx, monkeypatch):
    monkeypatch.setattr(wave_step, "RESUME_FROM_PODS", 2)
    ctx = make_ctx()
    wave_step.save_lists(ctx, _observer([pod("p0", "9"), pod("p1", "10")]))
    names = [e["file"] for e in ctx.read_file(OBSERVER_LISTS)]
    assert names == [f"{OBSERVER_LISTS}-0", f"{OBSERVER_LISTS}-1"] and all(ctx.files(n).is_file() for n in names)
    assert [e["rv"] for e in ctx.read_file(OBSERVER_LISTS)] == ["10", "10"]
    server = ByPath({PODS: [{"type": "MODIFIED", "object": pod("p1", "11", "Succeeded")}, BOOKMARK]})
    monkeypatch.setattr(ctx, "reader", lambda: server)
    resumed = collect_step.resumed_lists(ctx)
    got = resumed.call("GET", PODS, query={"labelSelector": "wave=w1"}).body["items"]
    assert sorted((p["metadata"]["name"], p["status"]["phase"]) for p in got) == [("p0", "Pending"),
                                                                                ("p1", "Succeeded")]
    assert lists(server) == 0


def test_a_small_wave_saves_nothing_and_collection_lists_as_before(make_ctx, monkeypatch):
    monkeypatch.setattr(wave_step, "RESUME_FROM_PODS", 3)
    ctx = make_ctx()
    wave_step.save_lists(ctx, _observer([pod("p0", "9"), pod("p1", "10")]))
    assert not ctx.files(OBSERVER_LISTS).is_file()
    assert collect_step.resumed_lists(ctx) is None


def test_lists_an_earlier_observer_named_without_their_headers_are_resumed_too(make_ctx, monkeypatch):
    monkeypatch.setattr(wave_step, "RESUME_FROM_PODS", 2)
    ctx = make_ctx()
    wave_step.save_lists(ctx, _observer([pod("p0", "9"), pod("p1", "10")]))
    ctx.writer.write_json(OBSERVER_LISTS, [e["file"] for e in ctx.read_file(OBSERVER_LISTS)])
    server = ByPath({PODS: [{"type": "DELETED", "object": pod("p0", "11")}, BOOKMARK]})
    monkeypatch.setattr(ctx, "reader", lambda: server)
    got = collect_step.resumed_lists(ctx).call("GET", PODS, query={"labelSelector": "wave=w1"}).body["items"]
    assert [p["metadata"]["name"] for p in got] == ["p1"] and lists(server) == 0
