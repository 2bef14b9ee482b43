"""Label and field selectors as the Kubernetes API parses them (``labelSelector``, ``fieldSelector``)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Callable

# resource -> field path -> getter; metadata.name / metadata.namespace work for every resource.
_FIELDS: dict[str, dict[str, Callable[[dict], str]]] = {
    "pods": {
        "spec.nodeName": lambda o: o.get("spec", {}).get("nodeName") or "",
        "spec.schedulerName": lambda o: o.get("spec", {}).get("schedulerName") or "",
        "spec.serviceAccountName": lambda o: o.get("spec", {}).get("serviceAccountName") or "",
        "spec.restartPolicy": lambda o: o.get("spec", {}).get("restartPolicy") or "",
        "status.phase": lambda o: o.get("status", {}).get("phase") or "",
        "status.nominatedNodeName": lambda o: o.get("status", {}).get("nominatedNodeName") or "",
        "status.podIP": lambda o: o.get("status", {}).get("podIP") or "",
    },
    "events": {
        **{f"involvedObject.{k}": (lambda k: lambda o: str(o.get("involvedObject", {}).get(k) or ""))(k)
           for k in ("kind", "namespace", "name", "uid", "apiVersion", "resourceVersion", "fieldPath")},
        "reason": lambda o: o.get("reason") or "",
        "type": lambda o: o.get("type") or "",
        "source": lambda o: o.get("source", {}).get("component") or "",
        "reportingComponent": lambda o: o.get("reportingComponent") or "",
    },
    "nodes": {"spec.unschedulable": lambda o: str(bool(o.get("spec", {}).get("unschedulable"))).lower()},
    "namespaces": {"status.phase": lambda o: o.get("status", {}).get("phase") or ""},
    "secrets": {"type": lambda o: o.get("type") or ""},
}


class SelectorError(ValueError):
    """A selector that cannot be parsed; the message is the API's 400 text."""


@dataclass(frozen=True)
class Requirement:
    key: str
    op: str  # "=", "!=", "in", "notin", "exists", "!"
    values: tuple[str, ...] = ()

    def matches(self, labels: dict[str, str]) -> bool:
        present = self.key in labels
        value = labels.get(self.key)
        if self.op == "=":
            return present and value == self.values[0]
        if self.op == "!=":
            return not present or value != self.values[0]
        if self.op == "in":
            return present and value in self.values
        if self.op == "notin":
            return not present or value not in self.values
        if self.op == "exists":
            return present
        return not present  # "!"


_SET_RE = re.compile(r"^\s*(\S+?)\s+(in|notin)\s*\((.*)\)\s*$")


def _split_top(text: str) -> list[str]:
    """Split on commas that are not inside parentheses."""
    parts, depth, cur = [], 0, ""
    for ch in text:
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += ch
    parts.append(cur)
    return [p.strip() for p in parts if p.strip()]


def parse_label_selector(text: str | None) -> list[Requirement]:
    """Parse ``a=b,c!=d,e in (x,y),f notin (z),g,!h``; raise SelectorError on bad syntax."""
    reqs: list[Requirement] = []
    for part in _split_top(text or ""):
        m = _SET_RE.match(part)
        if m:
            values = tuple(v.strip() for v in m.group(3).split(",") if v.strip())
            reqs.append(Requirement(m.group(1), m.group(2), values))
        elif "!=" in part:
            k, v = part.split("!=", 1)
            reqs.append(Requirement(_key(k, text), "!=", (v.strip(),)))
        elif "==" in part:
            k, v = part.split("==", 1)
            reqs.append(Requirement(_key(k, text), "=", (v.strip(),)))
        elif "=" in part:
            k, v = part.split("=", 1)
            reqs.append(Requirement(_key(k, text), "=", (v.strip(),)))
        elif part.startswith("!"):
            reqs.append(Requirement(_key(part[1:], text), "!"))
        else:
            reqs.append(Requirement(_key(part, text), "exists"))
    return reqs


def _key(k: str, text: str | None) -> str:
    k = k.strip()
    if not k or re.search(r"[\s()=!]", k):
        raise SelectorError(f"unable to parse requirement: invalid label key {k!r} in selector {text!r}")
    return k


def labels_match(reqs: list[Requirement], obj: dict) -> bool:
    labels = obj.get("metadata", {}).get("labels") or {}
    return all(r.matches(labels) for r in reqs)


def parse_field_selector(text: str | None, resource: str) -> list[tuple[str, str, str]]:
    """Parse ``a=b,c!=d`` into (field, op, value); unknown fields are refused like the API does."""
    out = []
    for part in _split_top(text or ""):
        if "!=" in part:
            f, v = part.split("!=", 1)
            op = "!="
        elif "==" in part:
            f, v = part.split("==", 1)
            op = "="
        elif "=" in part:
            f, v = part.split("=", 1)
            op = "="
        else:
            raise SelectorError(f"invalid selector: '{part}'; can't understand '{part}'")
        f = f.strip()
        if f not in ("metadata.name", "metadata.namespace") and f not in _FIELDS.get(resource, {}):
            raise SelectorError(f'field label not supported: {f}')
        out.append((f, op, v.strip()))
    return out


def field_value(obj: dict, field: str, resource: str) -> str:
    if field == "metadata.name":
        return obj.get("metadata", {}).get("name", "")
    if field == "metadata.namespace":
        return obj.get("metadata", {}).get("namespace", "")
    return _FIELDS[resource][field](obj)


def fields_match(reqs: list[tuple[str, str, str]], obj: dict, resource: str) -> bool:
    for f, op, v in reqs:
        actual = field_value(obj, f, resource)
        if (actual == v) != (op == "="):
            return False
    return True


@dataclass
class Selector:
    """Both selectors of one request, ready to test objects."""

    resource: str
    labels: list[Requirement]
    fields: list[tuple[str, str, str]]

    @classmethod
    def parse(cls, resource: str, label_selector: str | None, field_selector: str | None) -> "Selector":
        return cls(resource, parse_label_selector(label_selector), parse_field_selector(field_selector, resource))

    def matches(self, obj: dict) -> bool:
        return labels_match(self.labels, obj) and fields_match(self.fields, obj, self.resource)

    @property
    def empty(self) -> bool:
        return not self.labels and not self.fields

    def exact_name(self) -> str | None:
        """The name a ``metadata.name=X`` field selector pins (lets list skip a scan)."""
        for f, op, v in self.fields:
            if f == "metadata.name" and op == "=":
                return v
        return None
