"""Port-forward to a process behind a pod on a KWOK node: kwok's namespaced ``PortForward`` (one per pod, named
after it: ``spec.forwards[].ports`` the container ports, ``target`` the local address and port where the process
listens), so the API server's ``pods/portforward`` reaches the process through kwok's kubelet API. Each pod's
process listens on a loopback address of its own (``pod_address``), so replicas keep their container port."""

from __future__ import annotations

import hashlib


def portforward_crd() -> dict:
    """The CustomResourceDefinition of kwok's ``PortForward`` (the fields of kwok v0.8.0's
    ``kustomize/crd/bases/kwok.x-k8s.io_portforwards.yaml`` that gpupoc writes); kwok reads the objects with
    ``--enable-crds=PortForward`` but does not define them."""
    target = {"type": "object", "required": ["address", "port"],
              "properties": {"address": {"type": "string", "minLength": 1},
                             "port": {"type": "integer", "format": "int32", "minimum": 0, "maximum": 65535}}}
    forward = {"type": "object", "properties": {
        "command": {"type": "array", "items": {"type": "string"}},
        "ports": {"type": "array", "items": {"type": "integer", "format": "int32"}},
        "target": target}}
    schema = {"type": "object", "properties": {
        "spec": {"type": "object", "required": ["forwards"],
                 "properties": {"forwards": {"type": "array", "items": forward}}},
        "status": {"type": "object", "x-kubernetes-preserve-unknown-fields": True}}}
    return {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
            "metadata": {"name": "portforwards.kwok.x-k8s.io"},
            "spec": {"group": "kwok.x-k8s.io", "scope": "Namespaced",
                     "names": {"kind": "PortForward", "listKind": "PortForwardList", "plural": "portforwards",
                               "singular": "portforward"},
                     "versions": [{"name": "v1alpha1", "served": True, "storage": True,
                                   "subresources": {"status": {}}, "schema": {"openAPIV3Schema": schema}}]}}


def pod_address(uid: str) -> str:
    """The loopback address a pod's process listens on: ``127.X.Y.Z`` from its UID (never 127.0.0.x, where other
    local servers listen). Loopback, so nothing dials the pod's private-range IP."""
    x, y, z = hashlib.sha256(uid.encode()).digest()[:3]
    return f"127.{max(x, 1)}.{y}.{max(z, 1)}"


def portforward_object(namespace: str, pod: str, address: str, ports: list[int]) -> dict:
    """kwok's ``PortForward`` for one pod: each container port to the same port on ``address``."""
    return {"apiVersion": "kwok.x-k8s.io/v1alpha1", "kind": "PortForward",
            "metadata": {"name": pod, "namespace": namespace},
            "spec": {"forwards": [{"ports": [p], "target": {"address": address, "port": p}} for p in sorted(ports)]}}
