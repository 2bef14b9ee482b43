"""The API server's front proxy to aggregated APIs (Kueue's visibility server): a client certificate, issued by
the control plane's CA for ``front-proxy-client``, that kube-apiserver presents when it forwards a request,
and the request-header flags by which an aggregated server trusts the user the API server names
(``--requestheader-*``, written into ``kube-system/extension-apiserver-authentication``). Without them an
aggregated server sees every forwarded request as anonymous and refuses it."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

from gpupoc.common.pki import write_private

PROXY_CLIENT = "front-proxy-client"
VALID = dt.timedelta(days=365)


def proxy_client_files(pki_dir: Path) -> tuple[Path, Path]:
    return pki_dir / f"{PROXY_CLIENT}.crt", pki_dir / f"{PROXY_CLIENT}.key"


def ensure_proxy_client(pki_dir: Path, ca_cert: Path, ca_key: Path) -> tuple[Path, Path]:
    """The front proxy's client certificate and key (0600), issued by the CA once and kept."""
    cert_file, key_file = proxy_client_files(pki_dir)
    if cert_file.is_file() and key_file.is_file():
        return cert_file, key_file
    ca = x509.load_pem_x509_certificate(ca_cert.read_bytes())
    signer = serialization.load_pem_private_key(ca_key.read_bytes(), password=None)
    key = ec.generate_private_key(ec.SECP256R1())
    now = dt.datetime.now(dt.timezone.utc)
    cert = (x509.CertificateBuilder()
            .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, PROXY_CLIENT)]))
            .issuer_name(ca.subject).public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + VALID)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.CLIENT_AUTH]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(signer, hashes.SHA256()))
    pem = serialization.Encoding.PEM
    write_private(key_file, key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    write_private(cert_file, cert.public_bytes(pem), 0o644)
    return cert_file, key_file


def aggregation_flags(pki_dir: Path, ca_cert: Path) -> list[str]:
    """kube-apiserver's flags for aggregated APIs: its client certificate and the request headers it sets."""
    cert_file, key_file = proxy_client_files(pki_dir)
    return [f"--requestheader-client-ca-file={ca_cert}", f"--requestheader-allowed-names={PROXY_CLIENT}",
            "--requestheader-username-headers=X-Remote-User", "--requestheader-uid-headers=X-Remote-Uid",
            "--requestheader-group-headers=X-Remote-Group", "--requestheader-extra-headers-prefix=X-Remote-Extra-",
            f"--proxy-client-cert-file={cert_file}", f"--proxy-client-key-file={key_file}"]
