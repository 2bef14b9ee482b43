"""The project's Alertmanager webhook receiver: appends every notification (firing and resolved) as one JSON
line to a record file, since Alertmanager forgets resolved alerts.

Only Alertmanager writes it: by default it requires a bearer token it generated and serves HTTPS with a CA it
made (``gpupoc.monitoring.intake_auth``; Alertmanager's ``http_config`` carries both). A request without the
token gets 401, is counted beside the record and never reaches it.

Run: ``python -m gpupoc.monitoring.receiver --port 9095 --record var/monitoring/alerts.jsonl`` (token and
certificate generated under the record's directory unless given). ``GET /-/healthy`` answers OK;
``GET /notifications`` (with the token) returns the record as a JSON list.
"""

from __future__ import annotations

import argparse
import json
import signal
import ssl
import sys
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Callable

from gpupoc.exceptions import ConfigError
from gpupoc.monitoring.intake_auth import (IntakeAuth, RefusalLog, add_auth_args, auth_from_args, bearer_refusal,
                                           check_bind, server_context)

MAX_REFUSED_DRAIN = 1024 * 1024  # a refused request's body is read (so the sender gets its 401) up to this much


class Record:
    """The append-only JSON-lines file; one writer lock, flushed after every line."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()

    def append(self, notification: dict) -> None:
        line = json.dumps(notification, sort_keys=True, separators=(",", ":"))
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(line + "\n")
            fh.flush()

    def read(self) -> list[dict]:
        if not self.path.exists():
            return []
        return [json.loads(x) for x in self.path.read_text(encoding="utf-8").splitlines() if x.strip()]


HEALTH_PATHS = ("/-/healthy", "/-/ready", "/healthz")


class ReceiverHandler(BaseHTTPRequestHandler):
    """What the alert receiver and the audit webhook share: a plain reply, the health paths, and the bearer
    token every other request must carry (``token``; a refused request goes to ``refusals``)."""

    token: str | None = None
    refusals: RefusalLog | None = None
    timeout = 60  # seconds a connection may stay silent

    def _authorized(self) -> bool:
        """True when the request carries the token; else it is answered 401 and counted (False)."""
        why = bearer_refusal(self.headers.get("Authorization"), self.token)
        if not why:
            return True
        try:
            self.rfile.read(min(int(self.headers.get("Content-Length") or 0), MAX_REFUSED_DRAIN))
        except (ValueError, OSError):
            pass
        if self.refusals is not None:
            self.refusals.add(self.client_address[0], self.path, why)
        body = f"{why}: send the bearer token of the receiver's token file (Authorization: Bearer ...)\n".encode()
        self.send_response(401)
        self.send_header("WWW-Authenticate", 'Bearer realm="gpupoc"')
        self.send_header("Content-Type", "text/plain; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
        return False

    def _send(self, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def make_handler(record: Record, auth: IntakeAuth) -> type[BaseHTTPRequestHandler]:
    class Handler(ReceiverHandler):
        server_version = "gpupoc-alert-receiver/1"
        token = auth.token
        refusals = RefusalLog(record.path)

        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            if self.path in HEALTH_PATHS:
                self._send(200, b"OK\n")
            elif self.path == "/notifications":
                if not self._authorized():
                    return
                self._send(200, json.dumps(record.read()).encode(), "application/json")
            else:
                self._send(404, b"not found: POST notifications to any path; GET /-/healthy, /notifications\n")

        def do_POST(self) -> None:  # noqa: N802
            if not self._authorized():
                return
            length = int(self.headers.get("Content-Length") or 0)
            raw = self.rfile.read(length)
            try:
                doc = json.loads(raw)
                if not isinstance(doc, dict):
                    raise ValueError("not a JSON object")
            except ValueError as exc:
                self._send(400, f"body is not an Alertmanager webhook JSON object: {exc}\n".encode())
                return
            doc["receivedAt"] = datetime.now(timezone.utc).isoformat(timespec="microseconds").replace("+00:00", "Z")
            doc["path"] = self.path
            record.append(doc)
            self._send(200, b"OK\n")

        def log_message(self, fmt: str, *args) -> None:
            sys.stderr.write(f"{self.log_date_time_string()} {self.address_string()} {fmt % args}\n")

    return Handler


class ReceiverServer(ThreadingHTTPServer):
    """A receiver's server: a connection that fails its TLS handshake or drops is one line in the log."""

    daemon_threads = True

    def handle_error(self, request, client_address) -> None:
        exc = sys.exc_info()[1]
        if isinstance(exc, (ssl.SSLError, ConnectionError, TimeoutError)):
            sys.stderr.write(f"{client_address[0]}: connection dropped: {exc.__class__.__name__}: {exc}\n")
            return
        super().handle_error(request, client_address)


def listen(host: str, port: int, handler: type[ReceiverHandler], auth: IntakeAuth,
           what: str) -> ThreadingHTTPServer:
    """A receiver's server on ``host``:``port`` (0: a free one), HTTPS when ``auth`` has a certificate; refuses
    a listen address beyond loopback without the token and TLS; notes the start beside the record."""
    check_bind(host, auth, what)
    httpd = ReceiverServer((host, port), handler)
    if auth.tls is not None:
        # the handshake runs in the request's thread (on its first read), so a silent client holds no other
        httpd.socket = server_context(auth.tls).wrap_socket(httpd.socket, server_side=True,
                                                            do_handshake_on_connect=False)
    if handler.refusals is not None:
        handler.refusals.started(auth)
    return httpd


def serve(host: str, port: int, record_path: Path, auth: IntakeAuth | None = None) -> ThreadingHTTPServer:
    """A started-but-not-serving server (call ``serve_forever``); port 0 picks a free one; ``auth``: the
    token and certificate (none: loopback only)."""
    auth = auth or IntakeAuth()
    return listen(host, port, make_handler(Record(record_path), auth), auth, "alert receiver")


def listening_line(what: str, host: str, httpd: ThreadingHTTPServer, record: Path, auth: IntakeAuth) -> str:
    """The start-up line: where it listens, where it records, where its token and CA are (never the token)."""
    return (f"{what} listening on {auth.scheme}://{host}:{httpd.server_address[1]} -> {record} (token file "
            f"{auth.token_file or 'none'}, CA {auth.ca_file or 'none'})")


def main(argv: list[str] | None = None) -> int:
    return run_main(argv, "gpupoc.monitoring.receiver", __doc__, "the notifications", "alert receiver", "receiver",
                    serve)


Serve = Callable[[str, int, Path, IntakeAuth], ThreadingHTTPServer]


def run_main(argv: list[str] | None, module: str, doc: str | None, records: str, what: str, banner: str,
             serve_fn: Serve) -> int:
    """``python -m <module>`` of an evidence receiver: its flags, its token and TLS, serve until stopped; a bad
    flag is one line on stderr and exit 2."""
    p = argparse.ArgumentParser(prog=f"python -m {module}", description=(doc or "").split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--record", type=Path, required=True, help=f"JSON-lines file {records} are appended to")
    add_auth_args(p)
    args = p.parse_args(argv)
    try:
        auth = auth_from_args(args, args.record.resolve().parent, what)
        httpd = serve_fn(args.host, args.port, args.record, auth)
    except ConfigError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return serve_until_stopped(httpd, listening_line(banner, args.host, httpd, args.record, auth))


def serve_until_stopped(httpd: ThreadingHTTPServer, banner: str) -> int:
    """Print ``banner``, serve until SIGTERM or Ctrl-C, close the socket; the exit status (0)."""
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=httpd.shutdown, daemon=True).start())
    print(banner, flush=True)
    try:
        httpd.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        httpd.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
