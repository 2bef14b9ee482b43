"""The audit webhook backend's kubeconfig (``--audit-webhook-config-file``): the API server posts batches of
``audit.k8s.io/v1`` EventLists to the URL. The webhook is optional; without a URL no file is written."""

from __future__ import annotations

import base64
from pathlib import Path

import yaml

from gpupoc.common.pki import write_private
from gpupoc.exceptions import GpupocError


def webhook_kubeconfig(url: str, ca_file: Path | None = None) -> dict:
    if not url.startswith(("http://", "https://")):
        raise GpupocError(f"audit_webhook_url: expected an http(s) URL, got {url!r}")
    cluster: dict = {"server": url}
    if ca_file is not None:
        cluster["certificate-authority-data"] = base64.b64encode(Path(ca_file).read_bytes()).decode()
    return {"apiVersion": "v1", "kind": "Config", "current-context": "webhook",
            "clusters": [{"name": "audit-webhook", "cluster": cluster}],
            "users": [{"name": "kube-apiserver", "user": {}}],
            "contexts": [{"name": "webhook", "context": {"cluster": "audit-webhook", "user": "kube-apiserver"}}]}


def write_webhook_config(path: Path, url: str | None, ca_file: Path | None = None) -> Path | None:
    if not url:
        path.unlink(missing_ok=True)
        return None
    write_private(path, yaml.safe_dump(webhook_kubeconfig(url, ca_file), sort_keys=False).encode())
    return path
