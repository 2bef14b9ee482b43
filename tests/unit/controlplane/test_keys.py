"""Keys and identities: made once and kept, tokens only in 0600 files, kubeconfigs with the CA embedded."""

from __future__ import annotations

import base64
import stat

import yaml

from gpupoc.controlplane.keys import ensure_keys, read_tokens, write_kubeconfigs
from gpupoc.controlplane.layout import Layout


def test_a_second_start_keeps_the_keys_and_tokens(tmp_path):
    layout = Layout(tmp_path)
    layout.make()
    first = ensure_keys(layout)
    before = (first.pki.ca_cert.read_bytes(), first.sa_private.read_bytes(), first.token_file.read_text())
    again = ensure_keys(layout)
    assert (again.pki.ca_cert.read_bytes(), again.sa_private.read_bytes(), again.token_file.read_text()) == before


def test_the_token_file_names_the_administrator_in_system_masters(tmp_path):
    layout = Layout(tmp_path)
    layout.make()
    keys = ensure_keys(layout)
    rows = {r.split(",")[1]: r for r in keys.token_file.read_text().splitlines()}
    assert rows["gpupoc-admin"].endswith('"system:masters"') or rows["gpupoc-admin"].endswith("system:masters")
    assert "system:kube-controller-manager" in rows and "system:kube-scheduler" in rows
    assert stat.S_IMODE(keys.token_file.stat().st_mode) == 0o600


def test_the_admin_kubeconfig_embeds_the_ca_and_is_private(tmp_path):
    layout = Layout(tmp_path)
    layout.make()
    keys = ensure_keys(layout)
    path = write_kubeconfigs(layout, keys, "https://127.0.0.1:1234")
    doc = yaml.safe_load(path.read_text())
    cluster = doc["clusters"][0]["cluster"]
    assert cluster["server"] == "https://127.0.0.1:1234"
    assert base64.b64decode(cluster["certificate-authority-data"]) == keys.pki.ca_cert.read_bytes()
    assert doc["users"][0]["user"]["token"] == read_tokens(keys.token_file)["admin"]
    assert doc["current-context"] == "admin" and stat.S_IMODE(path.stat().st_mode) == 0o600


def test_the_front_proxy_client_certificate_is_issued_by_the_ca_for_client_auth(tmp_path):
    from cryptography import x509
    from cryptography.x509.oid import ExtendedKeyUsageOID

    from gpupoc.controlplane.front_proxy import PROXY_CLIENT, proxy_client_files

    layout = Layout(tmp_path)
    layout.make()
    keys = ensure_keys(layout)
    cert_file, key_file = proxy_client_files(layout.pki)
    cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
    ca = x509.load_pem_x509_certificate(keys.pki.ca_cert.read_bytes())
    assert cert.issuer == ca.subject
    assert cert.subject.rfc4514_string() == f"CN={PROXY_CLIENT}"
    assert ExtendedKeyUsageOID.CLIENT_AUTH in cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert stat.S_IMODE(key_file.stat().st_mode) == 0o600
    before = cert_file.read_bytes()
    ensure_keys(layout)
    assert cert_file.read_bytes() == before
