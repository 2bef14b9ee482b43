"""A message's shape: what stays when the names and numbers that differ between two clusters are replaced.

``shape`` replaces, in order: UIDs (``<uid>``), timestamps (``<time>``), IPv4 addresses (``<ip>``), the node
names given (``<node>``), generated name suffixes of ReplicaSets and their pods (``-<hash>``), the ``JTI=``
of a credential id (``JTI=<id>``) and every other run of digits (``<n>``). What is left is the wording."""

from __future__ import annotations

import re
from collections.abc import Iterable

UID = re.compile(r"\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b")
TIME = re.compile(r"\b\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(?:\.\d+)?(?:Z|[+-]\d{2}:\d{2})?")
IP = re.compile(r"\b\d{1,3}(?:\.\d{1,3}){3}\b")
JTI = re.compile(r"JTI=[^\s\"\]),]+")
GENERATED = re.compile(r"-[bcdfghjklmnpqrstvwxz2-9]{6,10}(?:-[bcdfghjklmnpqrstvwxz2-9]{5})?\b")
DIGITS = re.compile(r"\d+")


def shape(message: str | None, nodes: Iterable[str] = ()) -> str | None:
    """``message`` with names and numbers normalised (None stays None)."""
    if message is None:
        return None
    text = UID.sub("<uid>", str(message))
    text = TIME.sub("<time>", text)
    text = IP.sub("<ip>", text)
    text = JTI.sub("JTI=<id>", text)
    for node in sorted(set(nodes), key=len, reverse=True):  # the longest first: gpu-node-10 before gpu-node-1
        if node:
            text = re.sub(rf"(?<![\w.-]){re.escape(node)}(?![\w.-])", "<node>", text)
    text = GENERATED.sub("-<hash>", text)
    return DIGITS.sub("<n>", text)


def present(obj: dict | None, fields: Iterable[str]) -> list[str]:
    """Which dotted ``fields`` of ``obj`` are present (a non-null value, empty strings included)."""
    out = []
    for path in fields:
        node: object = obj
        for part in path.split("."):
            node = node.get(part) if isinstance(node, dict) else None
        if node is not None:
            out.append(path)
    return out
