"""A stand-in Kubernetes API for the wave, observer and attempt tests: namespaced pod lists, strategic-merge
gate removal, events and deletes, recording every call; and a pod builder."""

from __future__ import annotations

import copy
from datetime import datetime, timezone

from gpupoc.pipeline.common import repo_root

from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.pipeline.k8s import Response
from gpupoc.plan import load_plan_file
from gpupoc.podspec import labels as L

PLAN = load_plan_file(repo_root() / "plans" / "default.yaml")
T0 = datetime(2026, 11, 30, 9, 0, tzinfo=timezone.utc)


def pod(name, ns, item, gates=(PIPELINE_GATE,), created=T0, **status):
    return {"metadata": {"name": name, "namespace": ns, "creationTimestamp": created.strftime("%Y-%m-%dT%H:%M:%SZ"),
                         "labels": {L.RUN_ID: "r1"}, "annotations": {L.ITEM: item}},
            "spec": {"schedulingGates": [{"name": g} for g in gates],
                     "containers": [{"name": "base", "resources": {"limits": {"nvidia.com/gpu": "4"}}}]},
            "status": {"phase": "Pending", **status}}


class FakeApi:
    """Namespaced pod lists, strategic-merge gate removal and events, recording every call."""

    context = "admin"

    def __init__(self, pods, appear_after=0, events=()):
        self.pods = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}
        self.hidden = appear_after
        self.events = list(events)
        self.calls = []
        self.accepts = []  # each call's Accept (None: the client's default)

    def call(self, method, path, *, query=None, body=None, content_type=None, timeout=None, accept=None):
        self.calls.append((method, path, content_type, copy.deepcopy(body)))
        self.accepts.append(accept)
        parts = path.strip("/").split("/")
        if method == "GET" and parts[-1] == "pods":
            ns = parts[3]
            visible = [p for (n, _), p in self.pods.items() if n == ns]
            if self.hidden:
                self.hidden -= 1
                visible = visible[:1]
            return Response(200, {"kind": "PodList", "items": copy.deepcopy(visible)})
        if method == "GET" and parts[-1] == "events":
            return Response(200, {"items": [e for e in self.events if e["metadata"]["namespace"] == parts[3]]})
        if method == "PATCH":
            p = self.pods.get((parts[3], parts[5]))
            if p is None:
                return Response(404, {"kind": "Status", "message": f'pods "{parts[5]}" not found'})
            drop = {g["name"] for g in body["spec"]["schedulingGates"] if g.get("$patch") == "delete"}
            p["spec"]["schedulingGates"] = [g for g in p["spec"]["schedulingGates"] if g["name"] not in drop]
            p["metadata"]["annotations"].update(body["metadata"]["annotations"])
            return Response(200, p)
        if method == "DELETE" and parts[-1] == "pods":  # deletecollection: the namespace's pods the selector picks
            wanted = dict(t.split("=", 1) for t in ((query or {}).get("labelSelector") or "").split(",") if t)
            doomed = [k for k, p in self.pods.items() if k[0] == parts[3] and all(
                (p["metadata"].get("labels") or {}).get(lk) == lv for lk, lv in wanted.items())]
            gone = [self.pods.pop(k) for k in doomed]
            if "as=PartialObjectMetadataList" in (accept or ""):  # kube-apiserver's metadata-only answer
                return Response(200, {"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1", "items": [
                    {"kind": "PartialObjectMetadata", "metadata": p["metadata"]} for p in gone]})
            return Response(200, {"kind": "PodList", "items": gone})
        if method == "DELETE":
            return Response(200 if self.pods.pop((parts[3], parts[5]), None) else 404, {})
        return Response(404, {"kind": "Status", "message": "not found"})
