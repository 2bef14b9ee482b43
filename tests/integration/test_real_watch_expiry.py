"""The real API server's 410 Gone for a watch from a resourceVersion whose history is gone, beside the simulated
cluster's ``watch-expiry`` answer: the same event, code, reason and words, and the bulk shard's watch goes on
after it by listing again."""

from __future__ import annotations

import json
import re
import urllib.request

import pytest
import yaml

from gpupoc.controlplane import start_control_plane
from gpupoc.pipeline.k8s import ClientFactory
from gpupoc.plan import DEFAULT_PLAN, load_plan
from gpupoc.plan.model import Pool
from gpupoc.sim.api.compaction import EXPIRED_WATCH, too_old

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("control-plane"), pytest.mark.timeout(900)]

NS = "default"
PLAN = load_plan(DEFAULT_PLAN)
POOLS = [Pool.model_validate({**PLAN.pool("training").model_dump(), "nodes": 1, "node_names": []})]
TOO_OLD = re.compile(r"too old resource version: (\d+) \((\d+)\)")


def compact_etcd(port: int, revision: int) -> None:
    """What kube-apiserver's compactor does every ``--etcd-compaction-interval``: etcd's history compacted up to
    ``revision`` (etcd's JSON gateway, on loopback)."""
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v3/kv/compaction", method="POST",
                                 data=json.dumps({"revision": str(revision), "physical": True}).encode(),
                                 headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(req, timeout=30) as r:
        assert r.status == 200, r.read()


def watch_events(api_client, path: str, resource_version: str) -> tuple[int, list[dict]]:
    """A raw watch's HTTP status and its events (the server ends it within seconds)."""
    r = api_client.call_api(path, "GET", query_params=[("watch", "true"), ("resourceVersion", resource_version),
                                                       ("allowWatchBookmarks", "true"), ("timeoutSeconds", "3")],
                            header_params={"Accept": "application/json"}, auth_settings=["BearerToken"],
                            _preload_content=False, _request_timeout=30)
    text = r.data.decode()
    return r.status, [json.loads(line) for line in text.splitlines() if line.strip()]


def test_a_watch_from_a_compacted_resource_version_gets_the_same_410_from_the_real_and_the_simulated_server(
        tmp_path_factory):
    root = tmp_path_factory.mktemp("control-plane-410")
    plane = start_control_plane(root, pools=POOLS, plan=PLAN)
    try:
        context = yaml.safe_load(plane.kubeconfig.read_text())["current-context"]
        caller = ClientFactory(str(plane.kubeconfig)).caller(context)
        path = f"/api/v1/namespaces/{NS}/configmaps"
        created = []
        for i in range(5):  # history to compact away
            r = caller.call("POST", path, body={"metadata": {"name": f"churn-{i}"}, "data": {"i": str(i)}})
            assert r.status == 201, r.message
            created.append(int(r.body["metadata"]["resourceVersion"]))
        compact_etcd(plane.ports.etcd_client, created[-1])
        # a fresh API server's watch cache starts from a list at the newest resourceVersion: what came before is
        # only in etcd's history, now compacted (a long-running server's cache forgets it the same way)
        plane.stop()
        plane = start_control_plane(root, pools=POOLS, plan=PLAN)
        caller = ClientFactory(str(plane.kubeconfig)).caller(context)
        status, events = watch_events(caller.api_client, path, str(created[0]))
    finally:
        plane.stop()
    assert status == 200 and events and events[0]["type"] == "ERROR", (status, events[:2])
    real = events[0]["object"]
    assert (real["kind"], real["code"], real["reason"], real["status"]) == ("Status", 410, "Expired", "Failure"), real
    match = TOO_OLD.fullmatch(real["message"])
    # the watch cache's words or etcd's: the simulated server says the first for a watch from a compacted
    # resourceVersion and the second when it ends an open watch
    if match:
        assert match.group(1) == str(created[0]) and too_old(created[0], int(match.group(2))) == real["message"]
    else:
        assert real["message"] == EXPIRED_WATCH, f"the real words changed: {real['message']!r}"
    print(f"\nthe real API server ({plane.version}): {real['message']!r}")
