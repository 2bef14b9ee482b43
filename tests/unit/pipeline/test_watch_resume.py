"""The observer's watched lists resumed by collection: caught up by one watch from the saved resourceVersion,
listed again only when that watch is refused or cut."""

from __future__ import annotations

from gpupoc.pipeline.watch_cache import WatchingCaller
from gpupoc.pipeline.watch_resume import (ResumedLists, SavedCollection, from_records, pods_held, resume,
                                          saved_collections, saved_records)
from tests.unit.pipeline.test_watch_cache import PODS, FakeServer, lists, pod, wait_until

SELECTOR = (("labelSelector", "wave=w1"),)
EVENTS = "/api/v1/namespaces/team-a/events"


def _saved(rv: str = "10") -> SavedCollection:
    return SavedCollection(PODS, SELECTOR, rv, [pod("p0", "9"), pod("p1", "10")])


def _names(lists_: ResumedLists) -> list[tuple[str, str]]:
    body = lists_.call("GET", PODS, query={"labelSelector": "wave=w1"}).body
    return sorted((p["metadata"]["name"], p["status"]["phase"]) for p in body["items"])


def test_a_resumed_list_has_every_change_since_the_saved_version_without_a_list():
    server = FakeServer([[{"type": "MODIFIED", "object": pod("p0", "11", "Succeeded")},
                          {"type": "DELETED", "object": pod("p1", "12")},
                          {"type": "ADDED", "object": pod("p2", "13")},
                          {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "14"}}},
                          {"type": "ADDED", "object": pod("late", "15")}]])  # after the bookmark: not waited for
    resumed = resume(server, [_saved()])
    assert _names(resumed) == [("p0", "Succeeded"), ("p2", "Pending")]
    assert lists(server) == 0, "the cluster was listed again"
    watch = next(q for m, _, q in server.requests if m == "WATCH")
    assert ("resourceVersion", "10") in watch and ("allowWatchBookmarks", "true") in watch
    assert resumed.stats()[0]["watches"] == 1 and resumed.stats()[0]["lists"] == 0


def test_a_catch_up_refused_with_410_lists_the_collection_again():
    server = FakeServer([[{"type": "ERROR", "object": {"code": 410, "message": "too old resource version"}}]],
                        objects=[pod("p9", "30", "Running")], rv="30")
    resumed = resume(server, [_saved()])
    assert _names(resumed) == [("p9", "Running")]
    assert lists(server) == 1 and resumed.stats()[0]["relists_after_gone"] == 1


def test_a_cut_catch_up_lists_the_collection_again():
    class Cut(FakeServer):
        def stream(self, path, query, read_timeout_s, handle):
            self.requests.append(("WATCH", path, tuple(query)))
            raise ConnectionResetError("cut")

    server = Cut([], objects=[pod("p0", "20", "Succeeded")], rv="20")
    assert _names(resume(server, [_saved()])) == [("p0", "Succeeded")]
    assert lists(server) == 1


def test_a_stream_that_ends_without_a_bookmark_keeps_what_it_sent():
    server = FakeServer([[{"type": "MODIFIED", "object": pod("p1", "11", "Failed")}]])
    assert _names(resume(server, [_saved()])) == [("p0", "Pending"), ("p1", "Failed")]
    assert lists(server) == 0


def test_objects_loaded_while_the_watch_waits_are_changed_by_what_it_heard_before_they_came():
    server = FakeServer([[{"type": "MODIFIED", "object": pod("p0", "11", "Succeeded")},
                          {"type": "DELETED", "object": pod("p1", "12")},
                          {"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "14"}}}]])
    loaded = []

    def load(i: int) -> list[dict]:
        wait_until(lambda: any(m == "WATCH" for m, _, _ in server.requests))  # the watch was opened first
        loaded.append(i)
        return _saved().items

    resumed = resume(server, [SavedCollection(PODS, SELECTOR, "10", [])], load=load)
    assert loaded == [0]
    assert _names(resumed) == [("p0", "Succeeded")], "the loaded objects overwrote what the watch heard"
    assert lists(server) == 0


def test_the_caller_s_own_work_is_done_once_while_the_watches_wait_after_the_objects_loaded():
    server = FakeServer([[{"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "14"}}}]])
    order = []
    resume(server, [SavedCollection(PODS, SELECTOR, "10", [])],
           load=lambda i: order.append("load") or _saved().items, meanwhile=lambda: order.append("meanwhile"))
    assert order == ["load", "meanwhile"]
    resume(FakeServer([]), [], meanwhile=lambda: order.append("nothing to wait for"))
    assert "nothing to wait for" not in order, "with no list to resume there is no wait to use"


def test_objects_loaded_while_a_refused_watch_waited_give_way_to_a_list():
    server = FakeServer([[{"type": "ERROR", "object": {"code": 410, "message": "too old resource version"}}]],
                        objects=[pod("p9", "30", "Running")], rv="30")
    resumed = resume(server, [SavedCollection(PODS, SELECTOR, "10", [])], load=lambda i: _saved().items)
    assert _names(resumed) == [("p9", "Running")]
    assert resumed.stats()[0]["relists_after_gone"] == 1


def test_other_requests_go_to_the_server_as_asked():
    server = FakeServer([[{"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "11"}}}]],
                        objects=[pod("x", "1")])
    resumed = resume(server, [_saved()])
    resumed.call("GET", EVENTS)
    resumed.call("GET", PODS, query={"labelSelector": "wave=other"})
    assert [(m, p) for m, p, _ in server.requests if m == "GET"] == [("GET", EVENTS), ("GET", PODS)]


def test_the_observers_watched_lists_are_saved_with_their_version_and_counted():
    server = FakeServer([], objects=[pod("p0", "9"), pod("p1", "10")], rv="10")
    caller = WatchingCaller(server)
    try:
        caller.call("GET", PODS, query={"labelSelector": "wave=w1"})
        wait_until(server.done.is_set)
        saved = list(saved_collections(caller, ("pods",)))
    finally:
        caller.close()
    assert [(s.path, s.query, s.rv, len(s.items)) for s in saved] == [(PODS, SELECTOR, "10", 2)]
    assert pods_held(saved) == 2 and list(saved_collections(caller, ("events",))) == []
    again = from_records(saved_records(saved))
    assert again == saved


def test_saved_collections_are_written_object_by_object_and_read_back_whole():
    from gpupoc.pipeline.watch_resume import from_records, saved_records

    saved = [_saved(), SavedCollection(EVENTS, (), "12", []), SavedCollection(PODS, (("labelSelector", "x=y"),), "13",
                                                                              [pod("q", "13")])]
    records = list(saved_records(saved))
    assert len(records) == 3 + 2 + 1, "a header per collection, then each object alone"
    assert from_records(records) == saved


def test_saved_collections_read_back_from_the_evidence_file_as_written(tmp_path):
    import json

    from gpupoc.evidence.writer import EvidenceWriter
    from gpupoc.pipeline.watch_resume import from_records, saved_records

    saved = [_saved(), SavedCollection(EVENTS, (), "12", [{"metadata": {"name": "e1", "namespace": "team-a"},
                                                             "message": "Successfully assigned team-a/p0"}])]
    path = EvidenceWriter(tmp_path, "poc_queue_congestion", "r1").write_json_items("observer_lists",
                                                                                  saved_records(saved))
    assert from_records(json.loads(path.read_text())) == saved
