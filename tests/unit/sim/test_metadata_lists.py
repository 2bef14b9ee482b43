"""Answers asked for as metadata only, as kube-apiserver's ``transformResponseObject`` gives them: a list or a
deletecollection's answer as a PartialObjectMetadataList, a creation or a patch as a PartialObjectMetadata; the
audit log keeps that smaller answer."""

from __future__ import annotations

import asyncio
import json

from aiohttp.test_utils import TestClient, TestServer

from gpupoc.pipeline.k8s import METADATA_LIST
from gpupoc.sim.api.app import build_app
from gpupoc.sim.cluster import make_identities

from .behaviour_helpers import NS, make_state, submit

PODS = f"/api/v1/namespaces/{NS}/pods"
SELECTOR = "gpupoc.io/item"  # every pod ``submit`` makes carries it


def _headers(state, accept: str) -> dict:
    token = next(t for t, ident in state.identities.items() if ident.context == "admin")
    return {"Authorization": f"Bearer {token}", "Accept": accept}


def _answers(tmp_path) -> tuple[dict, dict, dict, list[str]]:
    state = make_state(tmp_path)
    state.identities = make_identities(state.config)
    for name in ("meta-a", "meta-b", "meta-c"):
        submit(state, name, gpus=1)  # gated: a delete takes them out at once

    async def body() -> tuple[dict, dict, dict]:
        async with TestClient(TestServer(build_app(state))) as client:
            listed = await client.get(PODS, params={"labelSelector": SELECTOR},
                                      headers=_headers(state, METADATA_LIST))
            whole = await client.get(PODS, params={"labelSelector": SELECTOR},
                                     headers=_headers(state, "application/json"))
            deleted = await client.delete(PODS, params={"labelSelector": SELECTOR},
                                          headers=_headers(state, METADATA_LIST))
            return await listed.json(), await whole.json(), await deleted.json()

    listed, whole, deleted = asyncio.run(body())
    state.audit.close()
    return listed, whole, deleted, state.audit_log_path.read_text().splitlines()


def test_a_list_and_a_deletecollection_answer_each_item_s_metadata_only_and_the_audit_log_keeps_that(tmp_path):
    listed, whole, deleted, audit = _answers(tmp_path)
    assert whole["kind"] == "PodList" and all("spec" in p for p in whole["items"]), "no Accept: the whole pods"
    for answer in (listed, deleted):
        assert answer["kind"] == "PartialObjectMetadataList" and answer["apiVersion"] == "meta.k8s.io/v1"
        assert sorted(i["metadata"]["name"] for i in answer["items"]) == ["meta-a", "meta-b", "meta-c"]
        assert all(i["kind"] == "PartialObjectMetadata" and set(i) == {"kind", "apiVersion", "metadata"}
                   for i in answer["items"]), "an item carries its metadata, never its spec or status"
        assert answer["metadata"]["resourceVersion"]
    event = next(json.loads(line) for line in audit if json.loads(line).get("verb") == "deletecollection")
    kept = event["responseObject"]
    assert kept["kind"] == "PartialObjectMetadataList" and len(kept["items"]) == 3
    assert not any("spec" in i for i in kept["items"]), "the audit log keeps the answer as sent, not the pods"


def test_a_creation_and_a_patch_asked_for_metadata_answer_it_alone_and_the_audit_log_keeps_no_whole_pod(tmp_path):
    from gpupoc.pipeline.k8s import METADATA_ONLY

    state = make_state(tmp_path)
    state.identities = make_identities(state.config)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "meta-one"},
           "spec": {"containers": [{"name": "base", "image": "gpupoc/virtual:1"}],
                    "schedulingGates": [{"name": "gpupoc.io/release"}]}}

    async def body() -> tuple[dict, dict, int]:
        async with TestClient(TestServer(build_app(state))) as client:
            created = await client.post(PODS, json=pod, headers=_headers(state, METADATA_ONLY))
            patched = await client.patch(f"{PODS}/meta-one", data=json.dumps({"spec": {"schedulingGates": None}}),
                                         headers={**_headers(state, METADATA_ONLY),
                                                  "Content-Type": "application/merge-patch+json"})
            refused = await client.post(PODS, json=pod, headers=_headers(state, METADATA_ONLY))
            return await created.json(), await patched.json(), refused.status

    created, patched, refused = asyncio.run(body())
    state.audit.close()
    for answer in (created, patched):
        assert answer["kind"] == "PartialObjectMetadata" and set(answer) == {"kind", "apiVersion", "metadata"}
        assert answer["metadata"]["name"] == "meta-one" and answer["metadata"]["creationTimestamp"]
    assert refused == 409, "an error is a Status, whatever form the answer was asked in"
    stored = state.store.get("pods", NS, "meta-one")
    assert "schedulingGates" not in stored["spec"], "the patch was applied: only its answer is short"
    kept = [json.loads(line) for line in state.audit_log_path.read_text().splitlines()]
    answers = [e["responseObject"] for e in kept if e.get("verb") in ("create", "patch") and e.get("responseObject")
               and (e.get("objectRef") or {}).get("name") == "meta-one" and e["responseStatus"]["code"] < 300]
    assert len(answers) == 2 and all(a["kind"] == "PartialObjectMetadata" for a in answers), answers
