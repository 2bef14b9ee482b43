"""The control plane's keys and identities, made once under ``<root>/pki`` and kept across restarts: a CA and
the API server's serving certificate (``gpupoc.common.pki``), the ServiceAccount signing key pair, the
token-auth file of the components and the administrator, and a kubeconfig per identity (0600, the CA
embedded). Tokens live only in these 0600 files; nothing here logs them."""

from __future__ import annotations

import base64
import csv
import io
import secrets
from dataclasses import dataclass
from pathlib import Path

import yaml
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import rsa

from gpupoc.common.pki import Pki, ensure_pki, write_private
from gpupoc.controlplane.front_proxy import ensure_proxy_client
from gpupoc.controlplane.layout import Layout

ADMIN = "admin"


@dataclass(frozen=True)
class Identity:
    name: str          # the kubeconfig file's name under config/
    user: str
    groups: tuple[str, ...]


IDENTITIES = (
    Identity(ADMIN, "gpupoc-admin", ("system:masters",)),
    Identity("kube-controller-manager", "system:kube-controller-manager", ()),
    Identity("kube-scheduler", "system:kube-scheduler", ()),
    # kwok writes every fake node's status and lease and every pod's status, as many kubelets would
    Identity("kwok", "system:kwok-controller", ("system:masters",)),
)


@dataclass(frozen=True)
class Keys:
    pki: Pki
    ca_key: Path
    sa_public: Path
    sa_private: Path
    token_file: Path


def ensure_keys(layout: Layout) -> Keys:
    """Every key and the token file, made when missing (kept otherwise)."""
    pki = ensure_pki(layout.pki, ("127.0.0.1", "localhost"), ca_name="gpupoc-control-plane-ca",
                     server_name="kube-apiserver", cert_name="apiserver")
    sa_private, sa_public = layout.pki / "sa.key", layout.pki / "sa.pub"
    if not (sa_private.is_file() and sa_public.is_file()):
        key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
        write_private(sa_private, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                                    serialization.NoEncryption()))
        write_private(sa_public, key.public_key().public_bytes(
            serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo), 0o644)
    token_file = layout.pki / "tokens.csv"
    if not token_file.is_file():
        write_private(token_file, token_csv({i.name: secrets.token_urlsafe(32) for i in IDENTITIES}).encode())
    ensure_proxy_client(layout.pki, pki.ca_cert, layout.pki / "ca.key")  # aggregated APIs (front_proxy)
    return Keys(pki, layout.pki / "ca.key", sa_public, sa_private, token_file)


def token_csv(tokens: dict[str, str]) -> str:
    """kube-apiserver's ``--token-auth-file``: ``token,user,uid,"group1,group2"`` per identity."""
    out = io.StringIO()
    w = csv.writer(out, lineterminator="\n")
    for i in IDENTITIES:
        w.writerow([tokens[i.name], i.user, f"gpupoc-{i.name}", ",".join(i.groups)])
    return out.getvalue()


def read_tokens(token_file: Path) -> dict[str, str]:
    """identity name -> token, from the token file."""
    by_user = {i.user: i.name for i in IDENTITIES}
    rows = csv.reader(io.StringIO(token_file.read_text(encoding="utf-8")))
    return {by_user[r[1]]: r[0] for r in rows if len(r) >= 2 and r[1] in by_user}


def kubeconfig_doc(server: str, ca_pem: bytes, user: str, token: str, context: str) -> dict:
    return {
        "apiVersion": "v1", "kind": "Config", "current-context": context,
        "clusters": [{"name": "gpupoc-control-plane", "cluster": {
            "server": server, "certificate-authority-data": base64.b64encode(ca_pem).decode()}}],
        "users": [{"name": user, "user": {"token": token}}],
        "contexts": [{"name": context, "context": {"cluster": "gpupoc-control-plane", "user": user}}],
    }


def write_kubeconfigs(layout: Layout, keys: Keys, server: str) -> Path:
    """A kubeconfig per identity (the administrator's at ``<root>/admin.kubeconfig``, context ``admin``)."""
    tokens = read_tokens(keys.token_file)
    ca = keys.pki.ca_pem()
    for i in IDENTITIES:
        path = layout.kubeconfig if i.name == ADMIN else layout.component_kubeconfig(i.name)
        doc = kubeconfig_doc(server, ca, i.user, tokens[i.name], ADMIN if i.name == ADMIN else i.name)
        write_private(path, yaml.safe_dump(doc, sort_keys=False).encode())
    return layout.kubeconfig
