"""How the evidence receivers (the audit webhook, the alert receiver) know their sender, so that only the API
server and Alertmanager write the evidence they record.

By default each receiver has a bearer token it generated (``<data-dir>/token``, mode 0600) and serves HTTPS
with a certificate signed by a CA it made (``<data-dir>/tls/``); the configs it writes for its senders carry the
token and the CA bundle. A receiver refuses to listen beyond loopback without both. A request without the
token is answered 401 and never reaches the record; it is counted in ``<record>.refused.jsonl`` beside the
record (time, remote address, path, why; never what the sender offered as a token).
"""

from __future__ import annotations

import argparse
import hmac
import ipaddress
import json
import secrets
import ssl
import threading
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path

from gpupoc.common.pki import LOOPBACK_HOSTS, ensure_pki, write_private
from gpupoc.exceptions import ConfigError

TOKEN_NAME = "token"
TLS_DIR = "tls"
WILDCARDS = ("0.0.0.0", "::", "")


@dataclass(frozen=True)
class IntakeAuth:
    """A receiver's sender authentication: the bearer token (and its file), the serving certificate and key,
    and the CA bundle its senders check the certificate with. ``None``: switched off (loopback only)."""

    token: str | None = None
    token_file: Path | None = None
    tls: tuple[Path, Path] | None = None
    ca_file: Path | None = None

    @property
    def scheme(self) -> str:
        return "https" if self.tls else "http"

    def ca_pem(self) -> bytes | None:
        return self.ca_file.read_bytes() if self.ca_file else None


def is_loopback(host: str) -> bool:
    """Whether ``host`` is reachable from this machine only (127.0.0.0/8, ::1, localhost)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_bind(host: str, auth: IntakeAuth, what: str) -> None:
    """Refuse to listen on ``host`` beyond loopback without both the token and TLS."""
    if is_loopback(host) or (auth.token and auth.tls):
        return
    missing = " and ".join(m for m, off in (("bearer token", not auth.token), ("TLS", not auth.tls)) if off)
    raise ConfigError("--host", [
        f"{host!r}: the {what} listens beyond loopback only with a bearer token and TLS, and it has no {missing}; "
        "drop --no-token/--no-tls (by default it generates both and writes them into its sender's config), or "
        "listen on 127.0.0.1"])


def read_token(path: Path) -> str:
    """The token held in ``path`` (surrounding whitespace dropped); ConfigError naming the flag when empty."""
    try:
        token = Path(path).read_text(encoding="utf-8").strip()
    except OSError as exc:
        raise ConfigError("--token-file", [f"{path}: not readable ({exc.strerror}); give a file holding the "
                                           "bearer token, or leave the flag out to have one generated"]) from None
    if not token:
        raise ConfigError("--token-file", [f"{path}: empty; write a token into it (e.g. `openssl rand -hex 32`), "
                                           "or leave the flag out to have one generated"])
    return token


def ensure_token(path: Path) -> Path:
    """A generated token (256 random bits) in ``path`` (0600), made once and kept."""
    if not path.is_file() or not path.read_text(encoding="utf-8").strip():
        write_private(path, (secrets.token_urlsafe(32) + "\n").encode())
    return path


def cert_hosts(host: str, extra: tuple[str, ...] = ()) -> tuple[str, ...]:
    """The names the serving certificate carries: loopback, the listen address (unless a wildcard), ``extra``."""
    named = () if host in WILDCARDS else (host.strip("[]"),)
    return tuple(dict.fromkeys((*LOOPBACK_HOSTS, *named, *(h for h in extra if h))))


def prepare(data_dir: Path, host: str, what: str, *, token_file: Path | None = None,
            tls: tuple[Path, Path] | None = None, ca_file: Path | None = None, no_token: bool = False,
            no_tls: bool = False, hosts: tuple[str, ...] = ()) -> IntakeAuth:
    """The receiver's authentication: the given token file and certificate, else generated ones under
    ``data_dir`` (``no_token``/``no_tls`` switch them off, on loopback only); ``hosts``: more names the
    certificate must carry (the host its senders reach it by)."""
    if no_token and token_file:
        raise ConfigError("--no-token", ["given with --token-file; choose one"])
    if no_tls and tls:
        raise ConfigError("--no-tls", ["given with --tls-cert/--tls-key; choose one"])
    data_dir = Path(data_dir)
    token_path = None if no_token else Path(token_file or ensure_token(data_dir / TOKEN_NAME)).resolve()
    token = read_token(token_path) if token_path else None
    if tls is None and not no_tls:
        name = what.replace(" ", "-")
        pki = ensure_pki(data_dir / TLS_DIR, cert_hosts(host, hosts), ca_name=f"gpupoc-{name}-ca",
                         server_name=name, cert_name=name)
        tls, ca_file = (pki.cert, pki.key), pki.ca_cert
    elif tls is not None:
        tls = (Path(tls[0]).resolve(), Path(tls[1]).resolve())
        ca_file = Path(ca_file or tls[0]).resolve()
    auth = IntakeAuth(token, token_path, tls, ca_file)
    check_bind(host, auth, what)
    return auth


def add_auth_args(p: argparse.ArgumentParser) -> None:
    """The flags every receiver takes for its token and certificate."""
    p.add_argument("--token-file", type=Path, help="the bearer token senders must send (default: one generated in "
                   "<data-dir>/token, mode 0600)")
    p.add_argument("--tls-cert", type=Path, help="serve HTTPS with this certificate (PEM), with --tls-key (default: "
                   "one signed by a CA generated in <data-dir>/tls)")
    p.add_argument("--tls-key", type=Path, help="the certificate's private key (PEM)")
    p.add_argument("--ca-file", type=Path, help="the CA senders check --tls-cert with (default: the certificate)")
    p.add_argument("--tls-san", action="append", default=[], metavar="HOST",
                   help="another name or address the generated certificate carries (repeatable)")
    p.add_argument("--no-token", action="store_true", help="accept requests without a token (loopback only)")
    p.add_argument("--no-tls", action="store_true", help="serve plain HTTP (loopback only)")


def auth_from_args(args: argparse.Namespace, data_dir: Path, what: str, hosts: tuple[str, ...] = ()) -> IntakeAuth:
    """``prepare`` from the flags of ``add_auth_args``."""
    if bool(args.tls_cert) != bool(args.tls_key):
        raise ConfigError("--tls-cert/--tls-key", ["give both the certificate and its private key, or neither"])
    tls = (args.tls_cert, args.tls_key) if args.tls_cert else None
    return prepare(data_dir, args.host, what, token_file=args.token_file, tls=tls, ca_file=args.ca_file,
                   no_token=args.no_token, no_tls=args.no_tls, hosts=(*hosts, *args.tls_san))


def auth_flags(auth: IntakeAuth) -> list[str]:
    """A receiver process's flags for ``auth`` (paths only: the token never goes on a command line)."""
    flags = ["--token-file", str(auth.token_file)] if auth.token_file else ["--no-token"]
    return flags + (["--tls-cert", str(auth.tls[0]), "--tls-key", str(auth.tls[1])] if auth.tls else ["--no-tls"])


def server_context(tls: tuple[Path, Path]) -> ssl.SSLContext:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.minimum_version = ssl.TLSVersion.TLSv1_2
    ctx.load_cert_chain(str(tls[0]), str(tls[1]))
    return ctx


def client_context(ca_file: Path | None) -> ssl.SSLContext | None:
    """A context that trusts the receiver's CA (None: the system's trust, or plain HTTP)."""
    return ssl.create_default_context(cafile=str(ca_file)) if ca_file else None


def bearer_refusal(header: str | None, token: str | None) -> str:
    """Why a request's ``Authorization`` header does not carry ``token`` ("" when it does, or no token is set)."""
    if token is None:
        return ""
    if not header or not header.startswith("Bearer "):
        return "no bearer token"
    return "" if hmac.compare_digest(header.encode(), f"Bearer {token}".encode()) else "wrong bearer token"


def refused_path(record: Path) -> Path:
    """Where a receiver counts the requests it refused: ``alerts.jsonl`` -> ``alerts.refused.jsonl``."""
    record = Path(record)
    return record.with_name(f"{record.stem}.refused.jsonl")


def _stamp(at: datetime | None = None) -> str:
    return (at or datetime.now(timezone.utc)).isoformat(timespec="microseconds").replace("+00:00", "Z")


class RefusalLog:
    """The refused requests of one receiver, one JSON line each, beside its record; each start of the receiver
    is a line too (``{"at", "start": {"token": bool, "tls": bool}}``), so a count knows whether it could refuse."""

    def __init__(self, record: Path):
        self.path = refused_path(record)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def _append(self, doc: dict) -> None:
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(json.dumps(doc, separators=(",", ":")) + "\n")

    def started(self, auth: IntakeAuth, at: datetime | None = None) -> None:
        self._append({"at": _stamp(at), "start": {"token": auth.token is not None, "tls": auth.tls is not None}})

    def add(self, remote: str, path: str, reason: str, at: datetime | None = None) -> None:
        self._append({"at": _stamp(at), "remote": remote, "path": path[:200], "reason": reason})


@dataclass(frozen=True)
class Refusals:
    """What a receiver refused in a window: ``refused`` requests; ``authenticated``: it required the token
    (as of its last start before the window's end)."""

    refused: int
    authenticated: bool


def refused(record: Path, start: datetime | None = None, end: datetime | None = None) -> Refusals | None:
    """The requests the receiver of ``record`` refused between ``start`` and ``end`` (None: it keeps no
    refusal file, so it predates them or never ran)."""
    path = refused_path(record)
    if not path.is_file():
        return None
    n, authenticated = 0, False
    for raw in path.read_text(encoding="utf-8", errors="replace").splitlines():
        try:
            doc = json.loads(raw)
            at = datetime.fromisoformat(doc["at"].replace("Z", "+00:00"))
        except (ValueError, KeyError, TypeError, AttributeError):
            continue
        if end is not None and at > end:
            continue
        if "start" in doc:
            authenticated = bool((doc.get("start") or {}).get("token"))
        elif start is None or at >= start:
            n += 1
    return Refusals(n, authenticated)
