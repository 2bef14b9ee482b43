"""The few protobuf bodies a current kubectl sends to a real API server, read into their JSON shape.

kubectl v1.37 posts its reviews (``auth can-i``: SelfSubjectAccessReview, ``auth can-i --list``:
SelfSubjectRulesReview, ``auth whoami``: SelfSubjectReview) as ``application/vnd.kubernetes.protobuf``: the
``k8s\\0`` magic, then a ``runtime.Unknown`` (1 typeMeta {1 apiVersion, 2 kind}, 2 raw) whose raw bytes are the
object (field numbers from k8s.io/api/authorization/v1/generated.proto). Any other kind stays unsupported (415)."""

from __future__ import annotations

MAGIC = b"k8s\x00"


def _varint(data: bytes, i: int) -> tuple[int, int]:
    shift = value = 0
    while True:
        b = data[i]
        i += 1
        value |= (b & 0x7F) << shift
        if not b & 0x80:
            return value, i
        shift += 7


def fields(data: bytes) -> dict[int, list]:
    """Field number -> values (bytes for length-delimited, int for varints); fixed-width ones skipped."""
    out: dict[int, list] = {}
    i = 0
    while i < len(data):
        key, i = _varint(data, i)
        number, wire = key >> 3, key & 7
        if wire == 0:
            value, i = _varint(data, i)
        elif wire == 2:
            size, i = _varint(data, i)
            value, i = data[i:i + size], i + size
        elif wire in (1, 5):
            i += 8 if wire == 1 else 4
            continue
        else:
            raise ValueError(f"unsupported wire type {wire}")
        out.setdefault(number, []).append(value)
    return out


def _strings(data: bytes, names: dict[int, str]) -> dict[str, str]:
    f = fields(data)
    return {name: f[n][0].decode() for n, name in names.items() if n in f and f[n][0]}


RESOURCE = {1: "namespace", 2: "verb", 3: "group", 4: "version", 5: "resource", 6: "subresource", 7: "name"}
NON_RESOURCE = {1: "path", 2: "verb"}


def _spec(kind: str, raw: bytes) -> dict:
    spec = fields(fields(raw).get(2, [b""])[0])
    if kind == "SelfSubjectAccessReview":
        out = {}
        if 1 in spec:
            out["resourceAttributes"] = _strings(spec[1][0], RESOURCE)
        if 2 in spec:
            out["nonResourceAttributes"] = _strings(spec[2][0], NON_RESOURCE)
        return out
    if kind == "SelfSubjectRulesReview":
        return {"namespace": spec[1][0].decode()} if 1 in spec else {}
    return {}


KINDS = ("SelfSubjectAccessReview", "SelfSubjectRulesReview", "SelfSubjectReview")


def decode_review(body: bytes) -> dict | None:
    """The review as JSON would carry it; None when ``body`` is not one of ``KINDS`` in protobuf."""
    if not body.startswith(MAGIC):
        return None
    try:
        unknown = fields(body[len(MAGIC):])
        meta = _strings(unknown.get(1, [b""])[0], {1: "apiVersion", 2: "kind"})
        if meta.get("kind") not in KINDS:
            return None
        return {**meta, "metadata": {}, "spec": _spec(meta["kind"], unknown.get(2, [b""])[0])}
    except (IndexError, ValueError, UnicodeDecodeError):
        return None
