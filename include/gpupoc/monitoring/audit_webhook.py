"""The audit webhook receiver: what kube-apiserver's webhook audit backend (``--audit-webhook-config-file``)
posts, written to a JSON-lines record, one audit.k8s.io/v1 Event a line.

kube-apiserver POSTs ``EventList`` batches (``{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[...]}``,
``staging/src/k8s.io/apiserver/plugin/pkg/audit/webhook/webhook.go``) to the server URL of a kubeconfig-format
file and retries any non-2xx answer with back-off. Only the API server writes the record: by default the
receiver requires a bearer token it generated (the webhook config's ``users[].user.token``) and serves HTTPS
with a CA it made (the config's ``certificate-authority-data``); a request without the token gets 401, is
counted beside the record and never reaches it (``gpupoc.monitoring.intake_auth``). Secret data never reaches
the record.

Run: ``python -m gpupoc.monitoring.audit_webhook --port 9096 --record var/audit/audit-events.jsonl``;
``gpupoc audit webhook up`` starts it in the background. ``GET /-/healthy`` answers OK.
"""

from __future__ import annotations

import json
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from gpupoc.monitoring.intake_auth import IntakeAuth, RefusalLog
from gpupoc.monitoring.receiver import HEALTH_PATHS, ReceiverHandler, listen, run_main

ACCEPTED_VERSIONS = ("audit.k8s.io/v1",)
MAX_BODY = 64 * 1024 * 1024  # a 400-event batch of RequestResponse events stays well below


def without_secret_data(event: dict) -> dict:
    """``event`` without Secret ``data``/``stringData`` in its request or response object (a policy that logs
    secrets at RequestResponse would otherwise put them in the record)."""
    out = dict(event)
    for key in ("requestObject", "responseObject"):
        obj = out.get(key)
        if isinstance(obj, dict) and obj.get("kind") in ("Secret", "SecretList"):
            items = obj.get("items") if obj.get("kind") == "SecretList" else [obj]
            clean = [{k: v for k, v in i.items() if k not in ("data", "stringData")} for i in items or []
                     if isinstance(i, dict)]
            out[key] = {**obj, "items": clean} if obj.get("kind") == "SecretList" else clean[0]
    return out


class EventRecord:
    """The append-only JSON-lines record; one writer lock, flushed after every batch."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch(exist_ok=True)
        self._lock = threading.Lock()

    def append(self, events: list[dict]) -> None:
        lines = "".join(json.dumps(without_secret_data(e), separators=(",", ":")) + "\n" for e in events)
        with self._lock, self.path.open("a", encoding="utf-8") as fh:
            fh.write(lines)
            fh.flush()


def parse_batch(raw: bytes) -> list[dict]:
    """The Events of one POST body; ValueError (with the reason) when it is not an audit EventList."""
    try:
        doc = json.loads(raw)
    except ValueError as exc:
        raise ValueError(f"body is not JSON: {exc}") from None
    if not isinstance(doc, dict) or doc.get("kind") != "EventList":
        raise ValueError("expected an audit.k8s.io/v1 EventList as kube-apiserver's webhook backend sends, got "
                         f"kind {doc.get('kind') if isinstance(doc, dict) else type(doc).__name__!r}")
    if doc.get("apiVersion") not in ACCEPTED_VERSIONS:
        raise ValueError(f"apiVersion {doc.get('apiVersion')!r} is not {ACCEPTED_VERSIONS[0]}; start the API "
                         f"server with --audit-webhook-version={ACCEPTED_VERSIONS[0]}")
    items = doc.get("items") or []
    if not isinstance(items, list) or not all(isinstance(i, dict) for i in items):
        raise ValueError("items must be a list of audit Events")
    return [{"kind": "Event", "apiVersion": doc["apiVersion"], **i} for i in items]


def make_handler(record: EventRecord, auth: IntakeAuth) -> type[BaseHTTPRequestHandler]:
    class Handler(ReceiverHandler):
        server_version = "gpupoc-audit-webhook/1"
        token = auth.token
        refusals = RefusalLog(record.path)

        def do_GET(self) -> None:  # noqa: N802 - http.server naming
            if self.path in HEALTH_PATHS:
                self._send(200, b"OK\n")
            else:
                self._send(404, b"not found: POST audit EventLists to any path; GET /-/healthy\n")

        def do_POST(self) -> None:  # noqa: N802
            if not self._authorized():
                return
            length = int(self.headers.get("Content-Length") or 0)
            if length > MAX_BODY:
                self._send(413, b"batch too large: lower --audit-webhook-batch-max-size\n")
                return
            try:
                events = parse_batch(self.rfile.read(length))
            except ValueError as exc:
                self._send(400, f"{exc}\n".encode())
                return
            record.append(events)
            self._send(200, b"{}", "application/json")

        def log_message(self, fmt: str, *args) -> None:
            sys.stderr.write(f"{self.log_date_time_string()} {self.address_string()} {fmt % args}\n")

    return Handler


def serve(host: str, port: int, record_path: Path, auth: IntakeAuth | None = None) -> ThreadingHTTPServer:
    """A started-but-not-serving server (call ``serve_forever``); port 0 picks a free one; ``auth``: the
    token and certificate (none: loopback only)."""
    auth = auth or IntakeAuth()
    return listen(host, port, make_handler(EventRecord(record_path), auth), auth, "audit webhook")


def main(argv: list[str] | None = None) -> int:
    return run_main(argv, "gpupoc.monitoring.audit_webhook", __doc__, "the audit events", "audit webhook",
                    "audit webhook", serve)

if __name__ == "__main__":
    sys.exit(main())
