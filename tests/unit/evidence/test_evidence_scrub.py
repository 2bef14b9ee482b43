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
