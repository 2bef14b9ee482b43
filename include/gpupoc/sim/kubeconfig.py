"""Write and read the simulated cluster's kubeconfig: one context per identity, bearer tokens, mode 0600."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import yaml

from gpupoc.exceptions import ConfigError
from gpupoc.sim.cluster import Identity


def kubeconfig_dict(url: str, cluster: str, identities: dict[str, Identity], current: str = "admin",
                    ca_pem: bytes | None = None) -> dict:
    users, contexts = [], []
    for token, ident in sorted(identities.items(), key=lambda kv: (kv[1].context != "admin", kv[1].context)):
        users.append({"name": ident.context, "user": {"token": token}})
        ctx = {"cluster": cluster, "user": ident.context}
        if ident.namespace:
            ctx["namespace"] = ident.namespace
        contexts.append({"name": ident.context, "context": ctx})
    return {
        "apiVersion": "v1",
        "kind": "Config",
        "preferences": {},
        "clusters": [{"name": cluster, "cluster": {"server": url, **({"certificate-authority-data": base64.b64encode(
            ca_pem).decode()} if ca_pem else {})}}],
        "users": users,
        "contexts": contexts,
        "current-context": current,
    }


def write_kubeconfig(path: str | Path, url: str, cluster: str, identities: dict[str, Identity],
                     ca_pem: bytes | None = None) -> Path:
    """Write the kubeconfig readable by its owner only (it holds bearer tokens)."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    text = yaml.safe_dump(kubeconfig_dict(url, cluster, identities, ca_pem=ca_pem), sort_keys=False)
    tmp = p.with_name(p.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, p)
    return p


def read_context(path: str | Path, context: str | None = None) -> tuple[str, str, str | None]:
    """(server url, bearer token, namespace) of a context (the current one by default)."""
    ctx = read_context_full(path, context)
    return ctx["server"], ctx["token"], ctx["namespace"]


def read_context_full(path: str | Path, context: str | None = None) -> dict:
    """server, token, namespace and ``ca_pem`` (bytes or None) of a context."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(str(p), ["(file): kubeconfig not found; start the cluster with `gpupoc sim serve` "
                                   "or pass --kubeconfig"])
    data = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    name = context or data.get("current-context")
    ctx = next((c["context"] for c in data.get("contexts") or [] if c.get("name") == name), None)
    if ctx is None:
        known = [c.get("name") for c in data.get("contexts") or []]
        raise ConfigError(str(p), [f"contexts: no context named {name!r}; known: {known}"])
    cluster = next((c["cluster"] for c in data.get("clusters") or [] if c.get("name") == ctx.get("cluster")), {})
    user = next((u["user"] for u in data.get("users") or [] if u.get("name") == ctx.get("user")), {})
    ca = cluster.get("certificate-authority-data")
    return {"server": cluster.get("server", ""), "token": user.get("token", ""), "namespace": ctx.get("namespace"),
            "ca_pem": base64.b64decode(ca) if ca else None}
