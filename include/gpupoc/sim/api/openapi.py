"""A minimal OpenAPI v3 index: enough for kubectl to find server-side field validation (create/apply).

kubectl checks ``/openapi/v3`` and the group-version document for a PATCH operation tagged with the
resource's ``x-kubernetes-group-version-kind`` that accepts ``fieldValidation``; then it validates on the
server instead of downloading full schemas. Schemas themselves are not served.
"""

from __future__ import annotations

import hashlib
import json

from gpupoc.sim.api.registry import SPECS


def _gv_path(group: str, version: str) -> str:
    return f"api/{version}" if not group else f"apis/{group}/{version}"


def _doc(group: str, version: str, mode=None) -> dict:
    paths = {}
    params = [{"name": n, "in": "query", "schema": {"type": "string"}, "uniqueItems": True}
              for n in ("dryRun", "fieldManager", "fieldValidation", "force")]
    for s in SPECS:
        if s.group != group or s.version != version or not s.stored or not s.served_in(mode):
            continue
        base = f"/{_gv_path(group, version)}" + ("/namespaces/{namespace}" if s.namespaced else "")
        gvk = {"group": group, "version": version, "kind": s.kind}
        op = {"x-kubernetes-group-version-kind": gvk, "parameters": params, "responses": {}}
        paths[f"{base}/{s.plural}/{{name}}"] = {"patch": {**op, "operationId": f"patch{s.kind}"},
                                                "put": {**op, "operationId": f"replace{s.kind}"}}
        paths[f"{base}/{s.plural}"] = {"post": {**op, "operationId": f"create{s.kind}"}}
    return {"openapi": "3.0.0", "info": {"title": "Kubernetes", "version": "v1.31.4"}, "paths": paths,
            "components": {"schemas": {}}}


def group_versions(mode=None) -> list[tuple[str, str]]:
    out = []
    for s in SPECS:
        if s.stored and s.served_in(mode) and (s.group, s.version) not in out:
            out.append((s.group, s.version))
    return out


def root(mode=None) -> dict:
    paths = {}
    for g, v in group_versions(mode):
        body = json.dumps(_doc(g, v, mode), sort_keys=True).encode()
        paths[_gv_path(g, v)] = {"serverRelativeURL": f"/openapi/v3/{_gv_path(g, v)}?hash="
                                                      f"{hashlib.sha512(body).hexdigest()[:128].upper()}"}
    return {"paths": paths}


def document(path: str, mode=None) -> dict | None:
    """The document of ``/openapi/v3/<gv path>`` (as served in scheduler ``mode``) or None."""
    for g, v in group_versions(mode):
        if path.strip("/") == f"openapi/v3/{_gv_path(g, v)}":
            return _doc(g, v, mode)
    return None
