"""A private CA and a serving certificate signed by it, made once under a directory and kept: the simulated
API server's (kubectl sends bearer tokens only over TLS) and the evidence receivers' (the API server and
Alertmanager check them with the CA bundle their config carries).

``ensure_pki`` writes ``ca.crt``, ``ca.key`` (0600), ``<name>.crt`` (the certificate, then the CA) and
``<name>.key`` (0600). The CA stays; the serving certificate is issued again, from the same CA, when it does
not name every host asked for, so a config that trusts the CA stays valid.
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import ssl
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

LOOPBACK_HOSTS = ("127.0.0.1", "localhost", "::1")
_VALID = dt.timedelta(days=365)


@dataclass(frozen=True)
class Pki:
    ca_cert: Path
    cert: Path
    key: Path

    def ssl_context(self) -> ssl.SSLContext:
        """The serving side's context (this certificate and key)."""
        ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
        ctx.load_cert_chain(self.cert, self.key)
        return ctx

    def ca_pem(self) -> bytes:
        return self.ca_cert.read_bytes()


def write_private(path: Path, data: bytes, mode: int = 0o600) -> Path:
    """Write ``data`` to ``path`` created with ``mode`` (0600: only the owner reads it)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.chmod(path, mode)  # an existing file keeps its old mode through os.open
    return path


def _name(cn: str) -> x509.Name:
    return x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])


def _san(host: str) -> x509.GeneralName:
    try:
        return x509.IPAddress(ipaddress.ip_address(host))
    except ValueError:
        return x509.DNSName(host)


def _key_usage(ca: bool) -> x509.KeyUsage:
    return x509.KeyUsage(digital_signature=True, key_cert_sign=ca, crl_sign=ca, content_commitment=False,
                         key_encipherment=False, data_encipherment=False, key_agreement=False, encipher_only=False,
                         decipher_only=False)


def _new_ca(ca_name: str) -> tuple[x509.Certificate, ec.EllipticCurvePrivateKey]:
    now = dt.datetime.now(dt.timezone.utc)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(_name(ca_name)).issuer_name(_name(ca_name))
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + _VALID)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
            .add_extension(_key_usage(ca=True), critical=True)
            .sign(key, hashes.SHA256()))
    return cert, key


def _issue(ca: x509.Certificate, ca_key, server_name: str, hosts: tuple[str, ...]):
    now = dt.datetime.now(dt.timezone.utc)
    key = ec.generate_private_key(ec.SECP256R1())
    cert = (x509.CertificateBuilder().subject_name(_name(server_name)).issuer_name(ca.subject)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - dt.timedelta(minutes=5)).not_valid_after(now + _VALID)
            .add_extension(x509.SubjectAlternativeName([_san(h) for h in dict.fromkeys(hosts)]), critical=False)
            .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
            .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
            .sign(ca_key, hashes.SHA256()))
    return cert, key


def cert_hosts(cert_file: Path) -> set[str]:
    """The hosts (DNS names and IP addresses) a PEM certificate's subjectAltName names."""
    cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
    try:
        san = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        return set()
    return set(san.get_values_for_type(x509.DNSName)) | {str(i) for i in san.get_values_for_type(x509.IPAddress)}


def ensure_pki(directory: Path, hosts: tuple[str, ...] = LOOPBACK_HOSTS[:2], *, ca_name: str = "gpupoc-ca",
               server_name: str = "gpupoc", cert_name: str = "server") -> Pki:
    """The CA and a serving certificate for ``hosts`` under ``directory``, made when missing (see the module)."""
    directory.mkdir(parents=True, exist_ok=True)
    pki = Pki(directory / "ca.crt", directory / f"{cert_name}.crt", directory / f"{cert_name}.key")
    ca_key_file = directory / "ca.key"
    have = pki.ca_cert.is_file() and pki.cert.is_file() and pki.key.is_file()
    if have and set(hosts) <= cert_hosts(pki.cert):
        return pki
    pem = serialization.Encoding.PEM
    if pki.ca_cert.is_file() and ca_key_file.is_file():
        ca = x509.load_pem_x509_certificate(pki.ca_cert.read_bytes())
        ca_key = serialization.load_pem_private_key(ca_key_file.read_bytes(), password=None)
    else:
        ca, ca_key = _new_ca(ca_name)
        write_private(ca_key_file, ca_key.private_bytes(pem, serialization.PrivateFormat.PKCS8,
                                                        serialization.NoEncryption()))
        write_private(pki.ca_cert, ca.public_bytes(pem), 0o644)
    cert, key = _issue(ca, ca_key, server_name, hosts)
    write_private(pki.cert, cert.public_bytes(pem) + ca.public_bytes(pem), 0o644)
    write_private(pki.key, key.private_bytes(pem, serialization.PrivateFormat.PKCS8, serialization.NoEncryption()))
    return pki
