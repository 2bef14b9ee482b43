"""The scrubber: tokens, passwords and kubeconfigs never reach evidence."""

from __future__ import annotations

from gpupoc.evidence import scrub, scrub_text
from gpupoc.evidence.scrub import REDACTED

JWT = "eyJhbGciOiJSUzI1NiIsImtpZCI6IiJ9.eyJzdWIiOiJzeXN0ZW06c2VydmljZWFjY291bnQifQ.c2lnbmF0dXJl"
KUBECONFIG = """apiVersion: v1
kind: Config
clusters:
- cluster: {server: 'http://127.0.0.1:41234'}
  name: gpupoc-sim
users:
- name: team-nlp
  user: {token: 3f9c2a7d5e}
"""


def test_bearer_tokens_and_jwts_are_redacted_in_text():
    out = scrub_text(f"GET /api with Authorization: Bearer abc.DEF-123_x= and {JWT} done")
    assert "abc.DEF-123_x" not in out and JWT not in out
    assert f"Bearer {REDACTED}" in out and out.endswith("done")


def test_key_value_secrets_in_text_are_redacted_keeping_the_key():
    out = scrub_text('token: s3cr3t password="hunter2" api_key=AKIA123 client-key-data: LS0tLS1')
    for secret in ("s3cr3t", "hunter2", "AKIA123", "LS0tLS1"):
        assert secret not in out
    assert out.startswith(f"token: {REDACTED}")


def test_kubeconfig_content_is_replaced_whole():
    assert scrub_text(KUBECONFIG) == f"{REDACTED} (kubeconfig content)"
    assert "3f9c2a7d5e" not in str(scrub({"doc": KUBECONFIG}))


def test_private_keys_are_redacted():
    out = scrub_text("key:\n-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----\nafter")
    assert "MIIEow" not in out and out.endswith("after")


def test_sensitive_keys_lose_their_values_at_any_depth():
    doc = {"platform": {"name": "sim", "kubeconfig": "/home/u/.kube/config", "auth": {"token": "t0k3n",
                                                                                      "password": "pw"}},
           "items": [{"Authorization": "Basic dXNlcjpwYXNz"}], "ok": True, "count": 3}
    out = scrub(doc)
    assert out["platform"]["name"] == "sim"
    assert out["platform"]["kubeconfig"] == REDACTED
    assert out["platform"]["auth"] == {"token": REDACTED, "password": REDACTED}
    assert out["items"][0]["Authorization"] == REDACTED
    assert out["ok"] is True and out["count"] == 3
    assert doc["platform"]["auth"]["token"] == "t0k3n"  # the input is not modified


def test_secret_objects_keep_metadata_but_lose_data():
    secret = {"kind": "Secret", "metadata": {"name": "team-nlp-registry-token", "namespace": "team-nlp"},
              "data": {"token": "c2VjcmV0", ".dockerconfigjson": "eyJhdXRocyI6e319"}, "type": "Opaque"}
    out = scrub(secret)
    assert out["metadata"]["name"] == "team-nlp-registry-token"
    assert out["data"] == {"token": REDACTED, ".dockerconfigjson": REDACTED}
    listed = scrub({"kind": "SecretList", "items": [{"metadata": {"name": "a"}, "data": {"x": "eA=="}}]})
    assert listed["items"] == [{"metadata": {"name": "a"}, "data": {"x": REDACTED}}]


def test_ordinary_evidence_is_left_alone():
    msg = ('User "system:serviceaccount:team-nlp:runner" cannot get resource "secrets" in API group "" '
           'in the namespace "team-vision"')
    assert scrub_text(msg) == msg
    row = {"resource": "secrets", "action": "read_secrets", "message": "0/5 nodes are available"}
    assert scrub(row) == row


def test_each_pattern_is_caught_whatever_the_case_of_its_trigger_word():
    samples = ["BEARER abcdefghij", "Basic dXNlcjpwYXNz", "x eyJhbGciOi.eyJzdWIiOi.sig1234", "API_KEY=abc123",
               "Refresh_Token: abc", "Client-Key-Data: abc", "SECRET-KEY=abc", "PassWd=abc",
               "-----BEGIN RSA PRIVATE KEY-----\nabc\n-----END RSA PRIVATE KEY-----"]
    for text in samples:
        assert scrub_text(text) != text, text


def _random_leaf(rng):
    import enum

    class Kind(str, enum.Enum):
        TOKEN = "abc"

    words = ["apiVersion", "api", "API_KEY", "apikey", "Bearer x.y", "basic", "eyJabcdef.ghijkl.mn", "tok", "TOKEN",
             "passwd", "Password", "-----BEGIN RSA PRIVATE KEY-----", "client-key-data", "ClientKey", "kind:\nConfig",
             "Secret", "credential", "Authorization", "cookie", "private_key", "sec", "ret", "to\u212aen",
             "caf\u00e9", "plain", "team-nlp", "training-node-7", "Successfully assigned"]
    pick = rng.random()
    if pick < 0.6:
        return rng.choice(words) + rng.choice(["", " ", ": ", "=", "\n"]) + rng.choice(words)
    return rng.choice([None, True, 0, 7, 1.5, 2**70, Kind.TOKEN])


def _random_obj(rng, depth=0):
    keys = ["name", "token", "apiVersion", "kind", "data", "Cookie", "auth", 3, "spec", "value"]
    if depth > 3 or rng.random() < 0.3:
        return _random_leaf(rng)
    if rng.random() < 0.5:
        return [_random_obj(rng, depth + 1) for _ in range(rng.randint(0, 3))]
    obj = {rng.choice(keys): _random_obj(rng, depth + 1) for _ in range(rng.randint(0, 4))}
    if rng.random() < 0.1:
        obj["kind"] = rng.choice(["Secret", "SecretList", "Pod"])
    return obj


def test_what_says_nothing_secret_is_exactly_what_scrub_leaves_alone():
    """The writer's fast path: an object judged to say nothing secret is one ``scrub`` would return unchanged."""
    import random

    from gpupoc.evidence.scrub import says_nothing_secret

    rng, fast = random.Random(7), 0
    for _ in range(4_000):
        obj = _random_obj(rng)
        if says_nothing_secret(obj):
            fast += 1
            assert scrub(obj) == obj, obj
    assert fast > 500  # the random objects do reach the fast path


def test_a_pod_without_secrets_takes_the_fast_path_and_one_with_a_token_does_not():
    from gpupoc.evidence.scrub import says_nothing_secret

    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "qc-1", "namespace": "team-nlp"},
           "spec": {"containers": [{"env": [{"name": "WORKLOAD_DURATION_SECONDS", "value": "30"}]}]}}
    assert says_nothing_secret(pod)
    pod["spec"]["containers"][0]["env"].append({"name": "HF_TOKEN", "value": "hf_abc"})
    assert not says_nothing_secret(pod)
    assert not says_nothing_secret({"name": "to\u212aen: abc"})  # the Kelvin sign lowers to a k
    assert not says_nothing_secret({1: "x"})  # a key JSON cannot hold as it is: scrub decides
