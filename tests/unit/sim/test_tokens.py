"""Bound service-account tokens (TokenRequest) and who they authenticate as."""

import base64
import json
import time

import pytest

from gpupoc.sim.api.tokens import authenticate, mint
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.config import emptied, load_cluster_config
from gpupoc.sim.server import make_state


@pytest.fixture
def state(tmp_path) -> ClusterState:
    s = make_state(emptied(load_cluster_config()), tmp_path)
    s.store.create("namespaces", {"metadata": {"name": "team-a"}})
    s.store.create("serviceaccounts", {"metadata": {"name": "runner", "namespace": "team-a"}})
    return s


def _sa(state):
    return state.store.get("serviceaccounts", "team-a", "runner")


def test_a_minted_token_authenticates_as_its_service_account_with_its_groups(state):
    token, exp = mint(state, "team-a", "runner", _sa(state)["metadata"]["uid"], 3600, [])
    who = authenticate(state, token)
    assert who.username == "system:serviceaccount:team-a:runner" and who.namespace == "team-a"
    assert who.groups == ("system:serviceaccounts", "system:serviceaccounts:team-a", "system:authenticated")
    assert exp - time.time() == pytest.approx(3600, abs=5)
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert claims["sub"] == "system:serviceaccount:team-a:runner" and claims["exp"] == exp


def test_a_token_stops_working_when_its_account_is_deleted_or_recreated(state):
    token, _ = mint(state, "team-a", "runner", _sa(state)["metadata"]["uid"], 3600, [])
    state.store.delete("serviceaccounts", "team-a", "runner")
    assert authenticate(state, token) is None
    state.store.create("serviceaccounts", {"metadata": {"name": "runner", "namespace": "team-a"}})
    assert authenticate(state, token) is None, "a new account of the same name has another uid"


def test_an_expired_or_altered_token_is_refused(state):
    uid = _sa(state)["metadata"]["uid"]
    expired, _ = mint(state, "team-a", "runner", uid, -1, [])
    assert authenticate(state, expired) is None
    token, _ = mint(state, "team-a", "runner", uid, 3600, [])
    head, body, sig = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(body + "=="))
    claims["kubernetes.io"]["namespace"] = "team-b"
    forged = base64.urlsafe_b64encode(json.dumps(claims).encode()).rstrip(b"=").decode()
    assert authenticate(state, f"{head}.{forged}.{sig}") is None
    assert authenticate(state, "not-a-token") is None



def test_a_minted_tokens_identity_carries_its_credential_id(state):
    from gpupoc.sim.api.tokens import CREDENTIAL_ID

    token, _ = mint(state, "team-a", "runner", _sa(state)["metadata"]["uid"], 600, [])
    claims = json.loads(base64.urlsafe_b64decode(token.split(".")[1] + "=="))
    assert authenticate(state, token).extra == {CREDENTIAL_ID: [f"JTI={claims['jti']}"]}
