"""What a container's process is, as a kubelet works it out from the pod: its argv (Docker semantics of
``command``/``args`` over the image's ENTRYPOINT), its environment (``envFrom``, ``env``, downward-API and
secret/configmap references), a clean host environment around it, the exit code a runtime reports, and the port
a serving container listens on. Shared by the simulated kubelet and the real control plane's process runner
(``controlplane/runner.py``), so both run the same program the same way."""

from __future__ import annotations

import base64
import os
import sys
from pathlib import Path
from typing import Protocol

import gpupoc

PACKAGE_ROOT = str(Path(gpupoc.__file__).resolve().parents[1])
BASE_ENV_KEYS = ("PATH", "LANG", "LC_ALL", "TZ", "PYTHONPATH", "VIRTUAL_ENV")


class ObjectStore(Protocol):
    """Where secrets and configmaps are read: ``get(resource, namespace, name)`` -> the object or None."""

    def get(self, resource: str, namespace: str, name: str) -> dict | None: ...


class StartFailed(Exception):
    """The container process could not be started (exit 128, reason StartError)."""


class ConfigMissing(Exception):
    """An env source (secret, configmap) is missing: waiting reason CreateContainerConfigError."""


def build_argv(container: dict, entrypoint: list[str]) -> list[str]:
    """Docker semantics: ``command`` replaces the image ENTRYPOINT, ``args`` follow it."""
    command = container.get("command") or []
    args = container.get("args") or []
    argv = [str(a) for a in (list(command) if command else list(entrypoint)) + list(args)]
    argv = [sys.executable if a == "{python}" else a for a in argv]
    if argv and argv[0] in ("python", "python3"):
        argv[0] = sys.executable  # the image's interpreter is this one
    if not argv:
        raise StartFailed("failed to generate container spec: no command specified")
    return argv


def _lookup(store: ObjectStore, resource: str, namespace: str, name: str, key: str | None, kind: str) -> dict | str:
    obj = store.get(resource, namespace, name)
    if obj is None:
        raise ConfigMissing(f'{kind} "{name}" not found')
    if key is None:
        return obj
    if resource == "secrets":
        raw = (obj.get("data") or {}).get(key)
        if raw is None:
            raise ConfigMissing(f"couldn't find key {key} in Secret {namespace}/{name}")
        return base64.b64decode(raw).decode(errors="replace")
    value = (obj.get("data") or {}).get(key)
    if value is None:
        raise ConfigMissing(f"couldn't find key {key} in ConfigMap {namespace}/{name}")
    return value


def _field_ref(pod: dict, path: str) -> str:
    meta, spec, status = pod["metadata"], pod.get("spec", {}), pod.get("status", {})
    simple = {
        "metadata.name": meta.get("name"), "metadata.namespace": meta.get("namespace"),
        "metadata.uid": meta.get("uid"), "spec.nodeName": spec.get("nodeName"),
        "spec.serviceAccountName": spec.get("serviceAccountName", "default"),
        "status.podIP": status.get("podIP"), "status.hostIP": status.get("hostIP"),
    }
    if path in simple:
        return simple[path] or ""
    for prefix, src in (("metadata.labels['", meta.get("labels") or {}),
                        ("metadata.annotations['", meta.get("annotations") or {})):
        if path.startswith(prefix) and path.endswith("']"):
            return src.get(path[len(prefix):-2], "")
    return ""


def container_env(store: ObjectStore, pod: dict, container: dict) -> dict[str, str]:
    """The container's own env (``envFrom`` then ``env``), resolving downward-API and secret/configmap refs."""
    ns = pod["metadata"]["namespace"]
    out: dict[str, str] = {}
    for src in container.get("envFrom") or []:
        prefix = src.get("prefix", "")
        for ref, resource, kind in ((src.get("configMapRef"), "configmaps", "configmap"),
                                    (src.get("secretRef"), "secrets", "secret")):
            if not ref:
                continue
            try:
                obj = _lookup(store, resource, ns, ref["name"], None, kind)
            except ConfigMissing:
                if ref.get("optional"):
                    continue
                raise
            for k, v in (obj.get("data") or {}).items():
                out[prefix + k] = base64.b64decode(v).decode(errors="replace") if resource == "secrets" else v
    for item in container.get("env") or []:
        name = item["name"]
        if "valueFrom" not in item:
            out[name] = str(item.get("value", ""))
            continue
        vf = item["valueFrom"]
        try:
            if "fieldRef" in vf:
                out[name] = _field_ref(pod, vf["fieldRef"].get("fieldPath", ""))
            elif "secretKeyRef" in vf:
                ref = vf["secretKeyRef"]
                out[name] = _lookup(store, "secrets", ns, ref["name"], ref["key"], "secret")
            elif "configMapKeyRef" in vf:
                ref = vf["configMapKeyRef"]
                out[name] = _lookup(store, "configmaps", ns, ref["name"], ref["key"], "configmap")
            elif "resourceFieldRef" in vf:
                res = vf["resourceFieldRef"].get("resource", "")
                kind, _, rname = res.partition(".")
                out[name] = str(((container.get("resources") or {}).get(kind) or {}).get(rname, "0"))
        except ConfigMissing:
            ref = vf.get("secretKeyRef") or vf.get("configMapKeyRef") or {}
            if not ref.get("optional"):
                raise
    return out


def process_env(user_env: dict[str, str], platform: dict[str, str]) -> dict[str, str]:
    """A clean environment: a few host basics, the pod's env, then what the platform injects."""
    env = {k: os.environ[k] for k in BASE_ENV_KEYS if k in os.environ}
    env.setdefault("LANG", "C.UTF-8")
    env["PYTHONUNBUFFERED"] = "1"
    paths = [PACKAGE_ROOT] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]
    env["PYTHONPATH"] = os.pathsep.join(dict.fromkeys(paths))
    env.update(user_env)
    env.update(platform)
    return env


def exit_code_of(returncode: int) -> int:
    """A container exit code: signals become 128 + signal number, as container runtimes report."""
    return 128 - returncode if returncode < 0 else returncode


def serving_port(container: dict, env: dict[str, str]) -> int | None:
    """The port a container asked to serve listens on (``args: [serve, --port, N]``, or ``WORKLOAD_MODE=serve``
    with ``WORKLOAD_PORT``), None when it does not serve."""
    args = [str(a) for a in container.get("args") or []]
    if args and args[0] == "serve":
        port = args[args.index("--port") + 1] if "--port" in args[:-1] else "8080"
        return int(port)
    if env.get("WORKLOAD_MODE") == "serve":
        return int(env.get("WORKLOAD_PORT") or 8080)
    return None
