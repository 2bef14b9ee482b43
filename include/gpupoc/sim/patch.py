"""The three PATCH flavours of the Kubernetes API: strategic merge, JSON merge (RFC 7386), JSON patch (RFC 6902)."""

from __future__ import annotations

import copy
from typing import Any

from gpupoc.common import fastjson

STRATEGIC = "application/strategic-merge-patch+json"
MERGE = "application/merge-patch+json"
JSON_PATCH = "application/json-patch+json"
APPLY = "application/apply-patch+yaml"

# list field name -> merge key (patchStrategy=merge in the Kubernetes types); others are replaced.
MERGE_KEYS: dict[str, str] = {
    "containers": "name",
    "initContainers": "name",
    "ephemeralContainers": "name",
    "schedulingGates": "name",
    "conditions": "type",
    "env": "name",
    "ports": "containerPort",
    "volumeMounts": "mountPath",
    "volumeDevices": "devicePath",
    "volumes": "name",
    "imagePullSecrets": "name",
    "ownerReferences": "uid",
    "addresses": "type",
    "hostAliases": "ip",
    "resourceClaims": "name",
    "containerStatuses": "name",
    "initContainerStatuses": "name",
}
# lists of scalars merged as sets
PRIMITIVE_MERGE = {"finalizers"}


class PatchError(ValueError):
    """The patch cannot be applied; the message says why (answered as 422 or 400)."""


def apply_patch(content_type: str, target: dict, patch: Any) -> dict:
    """Apply ``patch`` of ``content_type`` to a copy of ``target``."""
    ct = (content_type or "").split(";")[0].strip().lower()
    if ct == STRATEGIC:
        if not isinstance(patch, dict):
            raise PatchError("strategic merge patch must be a JSON object")
        return strategic_merge(fastjson.copy(target), patch)
    if ct == MERGE:
        return merge_patch(fastjson.copy(target), patch)
    if ct == JSON_PATCH:
        if not isinstance(patch, list):
            raise PatchError("json patch must be a JSON array of operations")
        return json_patch(fastjson.copy(target), patch)
    raise PatchError(f"unsupported patch content type {content_type!r}")


# -- RFC 7386 ---------------------------------------------------------------------------------
def merge_patch(target: Any, patch: Any) -> Any:
    """JSON merge patch: objects merge recursively, null deletes, everything else replaces."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if not isinstance(target, dict):
        target = {}
    for k, v in patch.items():
        if v is None:
            target.pop(k, None)
        else:
            target[k] = merge_patch(target.get(k), v)
    return target


# -- strategic merge --------------------------------------------------------------------------
def strategic_merge(target: Any, patch: Any, field: str = "") -> Any:
    """Kubernetes strategic merge: lists with a merge key merge by key; ``$patch`` directives honoured."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    if patch.get("$patch") == "replace":
        return {k: copy.deepcopy(v) for k, v in patch.items() if k != "$patch"}
    if patch.get("$patch") == "delete":
        return None
    if not isinstance(target, dict):
        target = {}
    for k, v in patch.items():
        if k.startswith("$setElementOrder/") or k == "$retainKeys" or k == "$patch":
            continue
        if k.startswith("$deleteFromPrimitiveList/"):
            name = k.split("/", 1)[1]
            if isinstance(target.get(name), list):
                target[name] = [x for x in target[name] if x not in (v or [])]
            continue
        if v is None:
            target.pop(k, None)
        elif isinstance(v, list):
            target[k] = _merge_list(target.get(k), v, k)
        elif isinstance(v, dict):
            merged = strategic_merge(target.get(k), v, k)
            if merged is None:
                target.pop(k, None)
            else:
                target[k] = merged
        else:
            target[k] = v
    return target


def _merge_list(current: Any, patch: list, field: str) -> list:
    key = MERGE_KEYS.get(field)
    if field in PRIMITIVE_MERGE and isinstance(current, list):
        out = list(current)
        out.extend(x for x in patch if x not in out)
        return out
    if key is None or not isinstance(current, list):
        if any(isinstance(x, dict) and x.get("$patch") == "replace" for x in patch):
            return [copy.deepcopy(x) for x in patch if not (isinstance(x, dict) and "$patch" in x)]
        return [copy.deepcopy(x) for x in patch if not (isinstance(x, dict) and x.get("$patch") == "delete")]
    if any(isinstance(x, dict) and x.get("$patch") == "replace" for x in patch):
        return [copy.deepcopy(x) for x in patch if not (isinstance(x, dict) and "$patch" in x)]
    out = [copy.deepcopy(x) for x in current]
    for item in patch:
        if not isinstance(item, dict):
            raise PatchError(f"{field}: list item {item!r} must be an object with merge key {key!r}")
        if key not in item:
            raise PatchError(f"{field}: map {item!r} does not contain declared merge key: {key}")
        idx = next((i for i, x in enumerate(out) if isinstance(x, dict) and x.get(key) == item[key]), None)
        if item.get("$patch") == "delete":
            if idx is not None:
                out.pop(idx)
            continue
        if idx is None:
            out.append(strategic_merge({}, item, field))
        else:
            out[idx] = strategic_merge(out[idx], item, field)
    return out


# -- RFC 6902 ---------------------------------------------------------------------------------
def _pointer(path: str) -> list[str]:
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f"json patch path {path!r} must start with '/'")
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _parent(doc: Any, parts: list[str], path: str) -> tuple[Any, str]:
    cur = doc
    for p in parts[:-1]:
        if isinstance(cur, dict) and p in cur:
            cur = cur[p]
        elif isinstance(cur, list) and p.isdigit() and int(p) < len(cur):
            cur = cur[int(p)]
        else:
            raise PatchError(f"jsonpatch: path {path!r} does not exist (missing {p!r})")
    return cur, parts[-1]


def _get(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    if not parts:
        return doc
    parent, last = _parent(doc, parts, path)
    if isinstance(parent, dict) and last in parent:
        return parent[last]
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent[int(last)]
    raise PatchError(f"jsonpatch: path {path!r} does not exist")


def _remove(doc: Any, path: str) -> Any:
    parts = _pointer(path)
    parent, last = _parent(doc, parts, path)
    if isinstance(parent, dict) and last in parent:
        return parent.pop(last)
    if isinstance(parent, list) and last.isdigit() and int(last) < len(parent):
        return parent.pop(int(last))
    raise PatchError(f"jsonpatch remove operation does not apply: doc is missing path: {path}")


def _add(doc: Any, path: str, value: Any, replace: bool = False) -> Any:
    parts = _pointer(path)
    if not parts:
        return copy.deepcopy(value)
    parent, last = _parent(doc, parts, path)
    if isinstance(parent, dict):
        if replace and last not in parent:
            raise PatchError(f"jsonpatch replace operation does not apply: doc is missing key: {path}")
        parent[last] = copy.deepcopy(value)
    elif isinstance(parent, list):
        if last == "-" and not replace:
            parent.append(copy.deepcopy(value))
        elif last.isdigit() and int(last) <= len(parent) - (1 if replace else 0):
            if replace:
                parent[int(last)] = copy.deepcopy(value)
            else:
                parent.insert(int(last), copy.deepcopy(value))
        else:
            raise PatchError(f"jsonpatch: index {last!r} out of range in {path!r}")
    else:
        raise PatchError(f"jsonpatch: cannot add to {path!r}: parent is not an object or list")
    return doc


def json_patch(doc: Any, ops: list) -> Any:
    """Apply RFC 6902 operations in order; any failure aborts the whole patch."""
    for op in ops:
        if not isinstance(op, dict) or "op" not in op or "path" not in op:
            raise PatchError(f"jsonpatch: operation {op!r} needs 'op' and 'path'")
        kind, path = op["op"], op["path"]
        if kind == "add":
            doc = _add(doc, path, op.get("value"))
        elif kind == "remove":
            _remove(doc, path)
        elif kind == "replace":
            doc = _add(doc, path, op.get("value"), replace=True)
        elif kind == "move":
            value = _remove(doc, op["from"])
            doc = _add(doc, path, value)
        elif kind == "copy":
            doc = _add(doc, path, _get(doc, op["from"]))
        elif kind == "test":
            if _get(doc, path) != op.get("value"):
                raise PatchError(f"testing value {path} failed")
        else:
            raise PatchError(f"Unexpected kind: {kind}")
    return doc
