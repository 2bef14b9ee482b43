"""Type checks the API server's JSON decoder makes before anything else (400 "cannot unmarshal ...")."""

from __future__ import annotations

from typing import Any

from gpupoc.sim.api.status import StatusError

OBJ, LIST, STR, INT, BOOL, STRMAP = "object", "array", "string", "number", "bool", "map[string]string"

_META = {"name": STR, "generateName": STR, "namespace": STR, "labels": STRMAP, "annotations": STRMAP,
         "finalizers": LIST, "ownerReferences": LIST, "resourceVersion": STR}
_CONTAINER = {"name": STR, "image": STR, "command": LIST, "args": LIST, "env": LIST, "resources": OBJ,
              "ports": LIST, "volumeMounts": LIST, "workingDir": STR}
_RESOURCES = {"limits": OBJ, "requests": OBJ}
_POD_SPEC = {"containers": LIST, "initContainers": LIST, "tolerations": LIST, "schedulingGates": LIST,
             "nodeSelector": STRMAP, "priority": INT, "priorityClassName": STR, "terminationGracePeriodSeconds": INT,
             "activeDeadlineSeconds": INT, "restartPolicy": STR, "schedulerName": STR, "nodeName": STR,
             "affinity": OBJ, "volumes": LIST, "serviceAccountName": STR}


def _type_ok(value: Any, expected: str) -> bool:
    if value is None:
        return True
    if expected == OBJ:
        return isinstance(value, dict)
    if expected == LIST:
        return isinstance(value, list)
    if expected == STR:
        return isinstance(value, str)
    if expected == INT:
        return isinstance(value, int) and not isinstance(value, bool)
    if expected == BOOL:
        return isinstance(value, bool)
    if expected == STRMAP:
        return isinstance(value, dict) and all(isinstance(v, str) for v in value.values())
    return True


def _fail(kind: str, path: str, value: Any, expected: str) -> StatusError:
    got = {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number"}.get(
        type(value), type(value).__name__)
    return StatusError(400, f'{kind} in version "v1" cannot be handled as a {kind}: json: cannot unmarshal {got} '
                            f"into Go struct field {path} of type {expected}", "BadRequest")


def _check(kind: str, obj: dict, fields: dict[str, str], prefix: str) -> None:
    for name, expected in fields.items():
        if name in obj and not _type_ok(obj[name], expected):
            raise _fail(kind, f"{prefix}{name}", obj[name], expected)


def check(kind: str, obj: Any) -> None:
    """Raise the decoder's 400 when a field has the wrong JSON type (a handler must never see it)."""
    if not isinstance(obj, dict):
        raise StatusError(400, f'{kind} in version "v1" cannot be handled as a {kind}: json: cannot unmarshal '
                               f"{type(obj).__name__} into Go value of type {kind}", "BadRequest")
    if not _type_ok(obj.get("metadata"), OBJ):
        raise _fail(kind, f"{kind}.metadata", obj["metadata"], "v1.ObjectMeta")
    _check(kind, obj.get("metadata") or {}, _META, "ObjectMeta.metadata.")
    for part in ("spec", "status"):
        if part in obj and not _type_ok(obj[part], OBJ):
            raise _fail(kind, f"{kind}.{part}", obj[part], f"v1.{kind}{part.capitalize()}")
    if kind in ("ConfigMap", "Secret"):
        _check(kind, obj, {"data": STRMAP, "stringData": STRMAP}, f"{kind}.")
    if kind != "Pod":
        return
    spec = obj.get("spec")
    if not _type_ok(spec, OBJ):
        raise _fail(kind, "Pod.spec", spec, "v1.PodSpec")
    spec = spec or {}
    _check(kind, spec, _POD_SPEC, "PodSpec.spec.")
    for field in ("containers", "initContainers", "tolerations", "schedulingGates"):
        for i, item in enumerate(spec.get(field) or []):
            if not isinstance(item, dict):
                raise _fail(kind, f"PodSpec.spec.{field}[{i}]", item, OBJ)
    for field in ("containers", "initContainers"):
        for c in spec.get(field) or []:
            _check(kind, c, _CONTAINER, "Container.spec.containers.")
            _check(kind, c.get("resources") or {}, _RESOURCES, "ResourceRequirements.spec.containers.resources.")
            for j, e in enumerate(c.get("env") or []):
                if not isinstance(e, dict):
                    raise _fail(kind, f"Container.spec.containers.env[{j}]", e, OBJ)
