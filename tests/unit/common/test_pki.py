"""common/pki: a CA and a serving certificate made once; the certificate names the hosts asked for and is
issued again from the same CA when a host is added; private keys are private."""

from __future__ import annotations

import ssl

from gpupoc.common.pki import cert_hosts, ensure_pki


def test_the_ca_and_certificate_are_made_once_and_kept(tmp_path):
    first = ensure_pki(tmp_path, ("127.0.0.1", "localhost"), cert_name="rx")
    ca, cert = first.ca_pem(), first.cert.read_bytes()
    again = ensure_pki(tmp_path, ("127.0.0.1",), cert_name="rx")
    assert again.ca_pem() == ca and again.cert.read_bytes() == cert
    assert oct((tmp_path / "ca.key").stat().st_mode & 0o777) == oct(first.key.stat().st_mode & 0o777) == "0o600"
    assert cert_hosts(first.cert) == {"127.0.0.1", "localhost"}


def test_a_new_host_gets_a_new_certificate_from_the_same_ca(tmp_path):
    first = ensure_pki(tmp_path, ("127.0.0.1",))
    wider = ensure_pki(tmp_path, ("127.0.0.1", "10.0.0.5", "runner.example"))
    assert wider.ca_pem() == first.ca_pem()
    assert cert_hosts(wider.cert) == {"127.0.0.1", "10.0.0.5", "runner.example"}
    ctx = ssl.create_default_context(cafile=str(wider.ca_cert))
    wider.ssl_context()  # the certificate and key load as a server's
    assert ctx.cert_store_stats()["x509_ca"] == 1
