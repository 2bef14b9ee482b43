"""The reviews a current kubectl posts in protobuf are read into their JSON shape; anything else stays 415."""

from __future__ import annotations

from gpupoc.sim.api.protobuf import MAGIC, decode_review


def field(number: int, value: bytes) -> bytes:
    assert len(value) < 128
    return bytes([number << 3 | 2, len(value)]) + value


def envelope(kind: str, raw: bytes, api_version: str = "authorization.k8s.io/v1") -> bytes:
    type_meta = field(1, api_version.encode()) + field(2, kind.encode())
    return MAGIC + field(1, type_meta) + field(2, raw) + field(4, b"application/vnd.kubernetes.protobuf")


def test_an_access_review_keeps_its_resource_attributes():
    attrs = field(1, b"team-nlp") + field(2, b"get") + field(5, b"pods") + field(6, b"log")
    body = envelope("SelfSubjectAccessReview", field(1, b"") + field(2, field(1, attrs)))
    assert decode_review(body) == {
        "apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview", "metadata": {},
        "spec": {"resourceAttributes": {"namespace": "team-nlp", "verb": "get", "resource": "pods",
                                        "subresource": "log"}}}


def test_a_non_resource_review_and_a_rules_review():
    non_resource = field(2, field(1, b"/metrics") + field(2, b"get"))
    nr = decode_review(envelope("SelfSubjectAccessReview", field(2, non_resource)))
    assert nr["spec"] == {"nonResourceAttributes": {"path": "/metrics", "verb": "get"}}
    rules = decode_review(envelope("SelfSubjectRulesReview", field(2, field(1, b"team-a"))))
    assert rules["spec"] == {"namespace": "team-a"}


def test_other_kinds_and_json_are_not_read():
    assert decode_review(envelope("Pod", b"", api_version="v1")) is None
    assert decode_review(b'{"kind": "SelfSubjectAccessReview"}') is None
    assert decode_review(MAGIC + b"\xff") is None
