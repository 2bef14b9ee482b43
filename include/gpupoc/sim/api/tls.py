"""A private CA and a serving certificate for 127.0.0.1: kubectl sends bearer tokens only over TLS
(``gpupoc.common.pki`` makes them)."""

from __future__ import annotations

from pathlib import Path

from gpupoc.common import pki
from gpupoc.common.pki import Pki

__all__ = ["Pki", "ensure_pki"]


def ensure_pki(directory: Path, hosts: tuple[str, ...] = ("127.0.0.1", "localhost")) -> Pki:
    """Create (once) ``ca.crt``, ``apiserver.crt``, ``apiserver.key`` under ``directory``."""
    return pki.ensure_pki(directory, hosts, ca_name="gpupoc-sim-ca", server_name="kube-apiserver",
                          cert_name="apiserver")
