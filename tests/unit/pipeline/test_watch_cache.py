"""The observer's watch cache: one list, then watches; a relist only after 410; lists served from the cache."""

from __future__ import annotations

import threading
import time
from datetime import datetime, timezone

from gpupoc.pipeline.k8s import Response
from gpupoc.pipeline.watch_cache import WatchingCaller, watching
from tests.waiting import first_truthy

PODS = "/api/v1/namespaces/team-a/pods"


def wait_until(predicate) -> None:
    first_truthy("the watch thread", predicate, step_seconds=60, poll=0.01)
AT = datetime(2026, 1, 1, tzinfo=timezone.utc)


def pod(name: str, rv: str, phase: str = "Pending") -> dict:
    return {"metadata": {"name": name, "namespace": "team-a", "resourceVersion": rv}, "status": {"phase": phase}}


class FakeServer:
    """Answers lists from ``objects`` and plays each watch's scripted events; records every request."""

    context = "admin"

    def __init__(self, watches: list[list[dict]], objects: list[dict] | None = None, rv: str = "10",
                 relisted: list[dict] | None = None):
        self.watches, self.objects, self.rv = list(watches), list(objects or []), rv
        self.relisted = relisted  # what a second list answers (the cluster after the watch's history ended)
        self.requests: list[tuple[str, str, tuple]] = []
        self.done = threading.Event()

    def call(self, method, path, *, query=None, body=None, content_type=None, timeout=None) -> Response:
        self.requests.append((method, path, tuple(sorted((query or {}).items() if isinstance(query, dict)
                                                          else query or []))))
        if self.relisted is not None and lists(self) > 1:
            return Response(200, {"items": list(self.relisted), "metadata": {"resourceVersion": "20"}}, "{}")
        return Response(200, {"items": list(self.objects), "metadata": {"resourceVersion": self.rv}}, "{}")

    def stream(self, path, query, read_timeout_s, handle):
        self.requests.append(("WATCH", path, tuple(query)))
        if not self.watches:
            self.done.set()
            while not handle.closed:
                time.sleep(0.01)
            return
        yield from self.watches.pop(0)


def lists(server: FakeServer) -> int:
    return sum(1 for m, _, _ in server.requests if m == "GET")


def test_later_lists_of_a_watched_collection_are_answered_from_the_cache():
    server = FakeServer([[{"type": "ADDED", "object": pod("p1", "11")},
                          {"type": "MODIFIED", "object": pod("p1", "12", "Running")}]], [pod("p0", "10")])
    caller = WatchingCaller(server)
    try:
        first = caller.call("GET", PODS, query={"labelSelector": "wave=w1"})
        assert [p["metadata"]["name"] for p in first.body["items"]] == ["p0"]
        wait_until(server.done.is_set)
        later = caller.call("GET", PODS, query={"labelSelector": "wave=w1"})
    finally:
        caller.close()
    assert sorted((p["metadata"]["name"], p["status"]["phase"]) for p in later.body["items"]) == [
        ("p0", "Pending"), ("p1", "Running")]
    assert lists(server) == 1


def test_a_watch_starts_from_the_lists_resource_version_with_bookmarks():
    server = FakeServer([], rv="42")
    caller = WatchingCaller(server)
    try:
        caller.call("GET", PODS, query={"labelSelector": "wave=w1"})
        wait_until(server.done.is_set)
    finally:
        caller.close()
    watch = dict(next(q for m, _, q in server.requests if m == "WATCH"))
    assert watch["resourceVersion"] == "42" and watch["allowWatchBookmarks"] == "true"
    assert watch["labelSelector"] == "wave=w1" and watch["watch"] == "true"


def test_an_ended_watch_resumes_from_the_last_bookmark_without_a_list():
    server = FakeServer([[{"type": "BOOKMARK", "object": {"metadata": {"resourceVersion": "77"}}}]])
    caller = WatchingCaller(server)
    try:
        caller.call("GET", PODS)
        wait_until(server.done.is_set)
    finally:
        caller.close()
    watches = [dict(q) for m, _, q in server.requests if m == "WATCH"]
    assert [w["resourceVersion"] for w in watches] == ["10", "77"]
    assert lists(server) == 1


def test_410_gone_brings_one_relist_and_a_deleted_pod_leaves_the_cache():
    server = FakeServer([[{"type": "ERROR", "object": {"kind": "Status", "code": 410, "message": "too old"}}]],
                        [pod("p0", "10"), pod("p1", "10")], relisted=[pod("p1", "20", "Running")])
    changes: list[tuple[str, str]] = []
    caller = WatchingCaller(server, lambda path: lambda kind, obj, at: changes.append(
        (kind, (obj.get("metadata") or {}).get("name"))))
    try:
        caller.call("GET", PODS)
        wait_until(server.done.is_set)
        items = caller.call("GET", PODS).body["items"]
    finally:
        caller.close()
    assert lists(server) == 2
    assert [(p["metadata"]["name"], p["status"]["phase"]) for p in items] == [("p1", "Running")]
    assert ("DELETED", "p0") in changes and ("MODIFIED", "p1") in changes and ("RELISTED", None) in changes
    assert next(iter(caller.collections.values())).stats.relists_after_gone == 1


def test_a_watch_refused_for_good_goes_back_to_listing_on_every_read():
    server = FakeServer([[{"type": "ERROR", "object": {"kind": "Status", "code": 403, "message": "forbidden"}}]])
    caller = WatchingCaller(server)
    try:
        caller.call("GET", PODS)
        collection = next(iter(caller.collections.values()))
        wait_until(lambda: bool(collection.stats.listing_only))
        caller.call("GET", PODS)
    finally:
        caller.close()
    assert lists(server) == 2
    assert "403" in collection.stats.listing_only


def test_named_gets_and_unwatched_lists_go_to_the_server_as_asked():
    server = FakeServer([])
    caller = WatchingCaller(server)
    caller.call("GET", PODS + "/p0")
    caller.call("GET", "/api/v1/nodes")
    caller.call("GET", "/api/v1/nodes")
    assert lists(server) == 3 and not caller.collections


def test_a_caller_without_streams_is_used_as_it_is():
    class Plain:
        context = "admin"

        def call(self, *a, **kw):
            return Response(200, {})

    plain = Plain()
    assert watching(plain) is plain
