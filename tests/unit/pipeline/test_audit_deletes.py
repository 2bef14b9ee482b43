"""Who deleted each pod, from the audit log: allowed delete requests on pods of the run's namespaces only,
oldest first, read from a log file without parsing the other requests."""

from __future__ import annotations

import json

from gpupoc.pipeline.audit_deletes import DELETE_LINE, pod_deletions


def event(verb: str, name: str, at: str, code: int = 200, ns: str = "team-a", sub: str = "", **extra) -> dict:
    ref = {"resource": "pods", "namespace": ns, "name": name, **({"subresource": sub} if sub else {})}
    return {"kind": "Event", "verb": verb, "objectRef": ref, "user": {"username": "u"},
            "responseStatus": {"code": code}, "requestReceivedTimestamp": at, "stageTimestamp": at, **extra}


def test_the_deletes_of_a_log_file_are_found_as_from_every_event(tmp_path):
    path = tmp_path / "audit.log"
    lines = [event("create", "p1", "2026-12-01T08:00:00Z", requestObject={"spec": {"x": "delete"}}),
             event("delete", "p1", "2026-12-01T08:00:09Z"), event("delete", "p1", "2026-12-01T08:00:05Z"),
             event("delete", "p2", "2026-12-01T08:00:06Z", code=403), event("delete", "p3", "2026-12-01T08:00:07Z",
                                                                            ns="team-b"),
             event("delete", "p4", "2026-12-01T08:00:08Z", sub="eviction")]
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    found = pod_deletions(path, ["team-a"])
    assert list(found) == [("team-a", "p1")], "refused, other namespaces' and subresource deletes are not deletes"
    assert [d.at.second for d in found[("team-a", "p1")]] == [5, 9], "oldest first"
    assert pod_deletions(str(path), ["team-a"]) == found


def test_every_way_a_delete_request_is_written_is_a_line_read():
    for line in (b'{"verb":"delete"}', b'{"verb": "delete", "x": 1}', b'{"kind":"EventList","items":[{"verb" :'
                 b' "delete"}]}'):
        assert DELETE_LINE.search(line), line
    assert not DELETE_LINE.search(b'{"verb":"create","requestObject":{"$patch":"delete"}}')


def test_an_unreadable_log_gives_no_deletes(tmp_path):
    assert pod_deletions(tmp_path / "missing.log", ["team-a"]) == {}


def test_a_binding_names_the_bound_pods_uid_from_its_object_ref_or_its_request(tmp_path):
    from gpupoc.pipeline.audit_deletes import pod_bindings

    path = tmp_path / "audit.log"
    lines = [event("create", "svc-1", "2026-12-01T08:00:31Z", sub="binding", ns="team-serving",
                   user={"username": "system:kube-scheduler"}, objectRef={"resource": "pods", "subresource": "binding",
                                                                          "namespace": "team-serving", "name": "svc-1",
                                                                          "uid": "039f34ac"}),
             event("create", "p2", "2026-12-01T08:00:20Z", sub="binding",
                   requestObject={"metadata": {"uid": "u-2"}, "target": {"kind": "Node", "name": "node-2"}}),
             event("create", "p3", "2026-12-01T08:00:21Z", sub="binding", code=409),
             event("create", "p4", "2026-12-01T08:00:22Z")]
    path.write_text("".join(json.dumps(e) + "\n" for e in lines))
    found = pod_bindings(path)
    assert [(b.key, b.uid, b.node, b.username) for b in found] == [
        ("team-a/p2", "u-2", "node-2", "u"), ("team-serving/svc-1", "039f34ac", None, "system:kube-scheduler")], \
        "oldest first; a refused binding and a plain create are not bindings"
    assert [b.key for b in pod_bindings(path, ["team-a"])] == ["team-a/p2"]
    assert pod_bindings(tmp_path / "missing.log") == []
