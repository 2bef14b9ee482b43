"""The object store: every change reaches the watches of its resource and namespace as it was committed."""

from __future__ import annotations

import json

from gpupoc.sim.store import Store


def _cm(name: str, ns: str = "a", **data) -> dict:
    return {"metadata": {"name": name, "namespace": ns}, "data": data}


def _drain(w) -> list[tuple[str, str]]:
    out = []
    while not w.queue.empty():
        c = w.queue.get_nowait()
        out.append((c.type, c.obj["metadata"]["name"]))
    return out


def test_a_change_is_encoded_once_as_the_object_was_when_committed():
    store = Store()
    w, _ = store.watch("configmaps", "a", None)
    obj = store.create("configmaps", _cm("x", v="1"))
    obj["data"]["v"] = "2"  # the stored object changes later; the queued change must not
    change = w.queue.get_nowait()
    line = change.line()
    assert line.endswith(b"\n") and line.count(b"\n") == 1
    event = json.loads(line)
    assert event["type"] == "ADDED" and event["object"]["data"] == {"v": "1"}
    assert event["object"]["metadata"]["resourceVersion"] == str(change.rv)
    assert change.line() is line, "every watcher sends the same encoded bytes"


def test_watches_get_the_changes_of_their_resource_and_namespace_in_commit_order():
    store = Store()
    in_a, _ = store.watch("configmaps", "a", None)
    everywhere, _ = store.watch("configmaps", None, None)
    secrets, _ = store.watch("secrets", None, None)
    store.create("configmaps", _cm("x"))
    store.create("configmaps", _cm("y", ns="b"))
    store.delete("configmaps", "a", "x")
    assert _drain(in_a) == [("ADDED", "x"), ("DELETED", "x")]
    assert _drain(everywhere) == [("ADDED", "x"), ("ADDED", "y"), ("DELETED", "x")]
    assert _drain(secrets) == []


def test_values_holds_every_stored_object_and_follows_deletes():
    store = Store()
    for name, ns in (("y", "b"), ("x", "a"), ("z", "a")):
        store.create("configmaps", _cm(name, ns=ns))
    store.delete("configmaps", "a", "z")
    assert sorted(o["metadata"]["name"] for o in store.values("configmaps")) == ["x", "y"]
    assert [o["metadata"]["name"] for o in store.list("configmaps")] == ["x", "y"]
