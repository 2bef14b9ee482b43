"""The project's Alertmanager webhook receiver: appends every notification (firing and resolved) as one JSON
line to a record file, since Alertmanager forgets resolved alerts.

Run: ``python -m gpupoc.monitoring.receiver --port 9095 --record var/monitoring/alerts.jsonl``.
``GET /-/healthy`` answers OK; ``GET /notifications`` returns the record as a JSON list.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from datetime import datetime, timezone
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


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
    """What the alert receiver and the audit webhook share: a plain reply and the health paths."""

    def _send(self, code: int, body: bytes, ctype: str = "text/plain; charset=utf-8") -> None:
        self.send_response(code)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def make_handler(record: Record) -> type[BaseHTTPRequestHandler]:
    class Handler(ReceiverHandler):
        server_version = "gpupoc-alert-receiver/1"

        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            if self.path in HEALTH_PATHS:
                self._send(200, b"OK\n")
            elif self.path == "/notifications":
                self._send(200, json.dumps(record.read()).encode(), "application/json")
            else:
                self._send(404, b"not found: POST notifications to any path; GET /-/healthy, /notifications\n")

        def do_POST(self) -> None:  # noqa: N802
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


def serve(host: str, port: int, record_path: Path) -> ThreadingHTTPServer:
    """A started-but-not-serving server (call ``serve_forever``); port 0 picks a free one."""
    return ThreadingHTTPServer((host, port), make_handler(Record(record_path)))


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m gpupoc.monitoring.receiver", description=__doc__.split("\n")[0])
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--record", type=Path, required=True, help="JSON-lines file the notifications are appended to")
    args = p.parse_args(argv)
    httpd = serve(args.host, args.port, args.record)
    return serve_until_stopped(httpd, f"receiver listening on http://{args.host}:{httpd.server_address[1]} -> "
                                      f"{args.record}")


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
