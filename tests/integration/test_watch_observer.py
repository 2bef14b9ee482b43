"""The observer's watch cache on the simulated API server: one list, then a watch; 410 Gone brings a relist."""

from __future__ import annotations

import pytest

from gpupoc.pipeline.k8s import ClientFactory
from gpupoc.pipeline.watch_cache import WatchingCaller
from tests.waiting import first_truthy

pytestmark = pytest.mark.integration


def _pod(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "labels": {"watched": "yes"}},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}}


def _names(caller: WatchingCaller, path: str) -> list[str]:
    return sorted(p["metadata"]["name"] for p in caller.call("GET", path, query={"labelSelector": "watched=yes"})
                  .body["items"])


class Counted:
    """The admin's caller, counting the lists it sends."""

    def __init__(self, caller):
        self.caller, self.context, self.lists = caller, caller.context, 0

    def call(self, method, path, **kw):
        self.lists += method == "GET" and path.endswith("/pods")
        return self.caller.call(method, path, **kw)

    def stream(self, *a):
        return self.caller.stream(*a)


@pytest.mark.parametrize("behaviours", ["", "watch-expiry"])
def test_the_cache_sees_every_pod_with_one_list(start_sim, behaviours):
    server = start_sim(behaviours=behaviours)
    factory = ClientFactory(str(server.kubeconfig))
    admin = factory.caller("admin")
    ns = "watched"
    assert admin.call("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}}).ok
    path = f"/api/v1/namespaces/{ns}/pods"
    changes: list[tuple[str, str]] = []
    counted = Counted(admin)
    caller = WatchingCaller(counted, lambda p: lambda kind, obj, at: changes.append(
        (kind, (obj.get("metadata") or {}).get("name"))))
    try:
        assert _names(caller, path) == []
        for i in range(3):
            assert admin.call("POST", path, body=_pod(f"w{i}")).ok
        first_truthy("the watch to bring three pods", lambda: _names(caller, path) == ["w0", "w1", "w2"],
                     step_seconds=60)
        assert admin.call("DELETE", f"{path}/w1", query={"gracePeriodSeconds": "0"}).ok
        first_truthy("the watch to bring the deletion", lambda: "w1" not in _names(caller, path), step_seconds=60)
        stats = next(iter(caller.collections.values())).stats
        if behaviours == "watch-expiry":  # a stream lives 10-30 s, then ends with 410 Gone
            first_truthy("a relist after 410 Gone", lambda: stats.relists_after_gone, step_seconds=90)
            assert admin.call("POST", path, body=_pod("after-gone")).ok
            first_truthy("the watch after the relist", lambda: "after-gone" in _names(caller, path),
                         step_seconds=60)
    finally:
        caller.close()
        factory.close()
    assert ("ADDED", "w0") in changes or ("MODIFIED", "w0") in changes
    assert stats.lists == 1 + stats.relists_after_gone
    assert counted.lists == stats.lists


@pytest.mark.parametrize("changed", ["before collection", "while collection loads the saved pods"])
def test_collection_resumes_the_observers_lists_and_sees_what_changed_after_it_without_listing(start_sim, changed):
    from gpupoc.pipeline.watch_resume import SavedCollection, resume, saved_collections

    server = start_sim()
    factory = ClientFactory(str(server.kubeconfig))
    admin = factory.caller("admin")
    ns = "resumed"
    assert admin.call("POST", "/api/v1/namespaces", body={"metadata": {"name": ns}}).ok
    path = f"/api/v1/namespaces/{ns}/pods"
    for i in range(3):
        assert admin.call("POST", path, body=_pod(f"r{i}")).ok
    observer = WatchingCaller(admin)
    try:
        first_truthy("the observer's cache to hold three pods", lambda: _names(observer, path) == ["r0", "r1", "r2"],
                     step_seconds=60)
    finally:
        observer.close()
    saved = list(saved_collections(observer, ("pods",)))

    def change() -> None:  # after the observer's end: one pod deleted, one created, another's labels changed
        assert admin.call("DELETE", f"{path}/r1", query={"gracePeriodSeconds": "0"}).ok
        assert admin.call("POST", path, body=_pod("after")).ok
        assert admin.call("PATCH", f"{path}/r2", body={"metadata": {"labels": {"later": "yes"}}},
                          content_type="application/merge-patch+json").ok

    def load(i: int) -> list[dict]:  # the watches are open: what changes now is heard, then applied after
        change()
        return saved[i].items

    counted = Counted(admin)
    try:
        if changed == "before collection":
            change()
            resumed = resume(counted, saved)
        else:
            resumed = resume(counted, [SavedCollection(s.path, s.query, s.rv, []) for s in saved], load=load)
        got = {p["metadata"]["name"]: p for p in resumed.call(
            "GET", path, query={"labelSelector": "watched=yes"}).body["items"]}
        listed = {p["metadata"]["name"]: p for p in admin.call(
            "GET", path, query={"labelSelector": "watched=yes"}).body["items"]}
    finally:
        factory.close()
    assert sorted(got) == sorted(listed) == ["after", "r0", "r2"]
    assert got["r2"]["metadata"]["labels"].get("later") == "yes"
    assert counted.lists == 0, "collection listed the pods again"
    assert resumed.stats()[0]["watches"] == 1
