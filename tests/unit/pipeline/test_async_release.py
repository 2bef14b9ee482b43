"""The bulk wave's release through the async client: every gate lifted, each answer recorded, none raised."""

from __future__ import annotations

import asyncio

import pytest

from gpupoc.common.constants import PIPELINE_GATE, RELEASED_AT
from gpupoc.pipeline.async_kube import AsyncKubeClient
from gpupoc.pipeline.async_release import _lift_all
from gpupoc.pipeline.bulk_rate import Throttling, TokenBucket, send
from gpupoc.pipeline.wave import release_patch

from .test_bulk_shard import NS, Cluster, body, run


@pytest.mark.parametrize("behaviours", [(), ("throttled",)])
def test_every_gate_is_lifted_many_at_once_and_each_answer_recorded_a_missing_pod_included(tmp_path, behaviours):
    """Under a throttling API server (429 with Retry-After) a refused patch is sent again after the wait."""
    from datetime import datetime, timezone

    from kubernetes_asyncio import client

    at = datetime(2026, 12, 1, 10, 0, tzinfo=timezone.utc)
    answers = []

    async def body_():
        async with Cluster(tmp_path, behaviours) as c:
            bucket = TokenBucket(qps=100, burst=10)
            created = await asyncio.gather(*(send(bucket, lambda i=i: c.kube.request(
                "POST", f"/api/v1/namespaces/{NS}/pods", body=body(f"p{i}")), Throttling()) for i in range(30)))
            assert all(r.ok for r in created), created  # created side by side: their Retry-After waits overlap
            token = next(t for t, i in c.state.identities.items() if i.context == "admin")
            cfg = client.Configuration(host=c.server.http_url)
            cfg.api_key, cfg.api_key_prefix = {"BearerToken": token}, {"BearerToken": "Bearer"}
            admin = AsyncKubeClient("admin", client.ApiClient(cfg))
            pods = [{"metadata": {"name": f"p{i}", "namespace": NS}} for i in range(31)]  # p30 does not exist
            try:
                out = await _lift_all(admin, pods, release_patch(at), 4,
                                      lambda path, answer, started: answers.append((path, answer.status)),
                                      TokenBucket(qps=100, burst=10))
            finally:
                await admin.close()
            return out, c.state.store.list("pods", NS)

    out, stored = run(body_())
    assert sorted(r.status for _, r in out) == [200] * 30 + [404], "a 429 is sent again after its Retry-After"
    missing = next(r for _, r in out if r.status == 404)
    assert "not found" in missing.message, "a failure keeps its Status message (a success comes without its body)"
    assert len(answers) == 31 and all(path.startswith(f"/api/v1/namespaces/{NS}/pods/p") for path, _ in answers)
    assert all(PIPELINE_GATE not in [g["name"] for g in p["spec"].get("schedulingGates") or []] for p in stored)
    assert {p["metadata"]["annotations"][RELEASED_AT] for p in stored} == {"2026-12-01T10:00:00.000000Z"}


def test_the_release_asks_for_each_pod_s_metadata_only_and_names_the_submitter(tmp_path):
    """The API server writes no whole pod back, nor into its audit log, and its audit log and metrics tell the
    release's requests by their User-Agent."""
    import json
    from datetime import datetime

    from gpupoc.pipeline.async_release import lift_gates
    from gpupoc.sim.kubeconfig import write_kubeconfig

    at = "2026-12-01T10:00:00.000000Z"

    async def body_():
        async with Cluster(tmp_path) as c:
            for i in range(3):
                assert (await c.kube.request("POST", f"/api/v1/namespaces/{NS}/pods", body=body(f"m{i}"))).ok
            kubeconfig = tmp_path / "kubeconfig"
            write_kubeconfig(kubeconfig, c.server.http_url, "sim", c.state.identities)
            pods = [{"metadata": {"name": f"m{i}", "namespace": NS}} for i in range(3)]
            out = await asyncio.to_thread(lift_gates, str(kubeconfig), "admin", pods,
                                          release_patch(datetime.fromisoformat(at)), 100, 10)
            return out, c.state.audit_log_path

    out, audit_log = run(body_())
    assert [r.status for _, r in out] == [200] * 3
    patches = [e for e in map(json.loads, audit_log.read_text().splitlines()) if e["verb"] == "patch"]
    assert len(patches) == 3
    assert all(e["userAgent"].startswith("gpupoc-submitter/") for e in patches), [e["userAgent"] for e in patches]
    assert all(e["responseObject"]["kind"] == "PartialObjectMetadata" for e in patches)
