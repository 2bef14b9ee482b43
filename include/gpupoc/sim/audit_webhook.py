"""The simulated API server's webhook audit backend, as kube-apiserver's ``--audit-webhook-config-file`` with
``--audit-webhook-mode=batch`` runs it (``staging/src/k8s.io/apiserver/plugin/pkg/audit/webhook/webhook.go`` and
``.../audit/buffered/buffered.go``; defaults from ``pkg/server/options/audit.go``):

- the config is a kubeconfig-format file: the current context's cluster ``server`` is where batches go, its
  ``certificate-authority(-data)`` or ``insecure-skip-tls-verify`` the TLS trust, its user's ``token`` the bearer;
- events are buffered (10,000 at most; beyond that new events are dropped) and POSTed as one audit.k8s.io/v1
  ``EventList`` once ``max_size`` (400) are waiting or ``max_wait`` (30 s) passed since the first of a batch;
- a failed POST (anything but 2xx, or no answer) is retried with exponential back-off from
  ``initial_backoff`` (10 s), five attempts in all, then the batch is dropped and the loss logged;
- on shutdown the buffer is flushed.
"""

from __future__ import annotations

import base64
import json
import logging
import ssl
import threading
import time
import urllib.error
import urllib.request
from collections import deque
from dataclasses import dataclass
from pathlib import Path

import yaml

from gpupoc.exceptions import ConfigError

log = logging.getLogger(__name__)
ATTEMPTS = 5
BACKOFF_FACTOR = 1.5


@dataclass(frozen=True)
class WebhookConfig:
    server: str
    token: str | None = None
    ca_pem: bytes | None = None
    insecure: bool = False
    max_size: int = 400
    max_wait_s: float = 30.0
    buffer_size: int = 10000
    initial_backoff_s: float = 10.0


def load_webhook_config(path: str | Path, **batch) -> WebhookConfig:
    """The webhook config file (kubeconfig format) with the batch settings ``batch`` (WebhookConfig fields)."""
    p = Path(path)
    try:
        doc = yaml.safe_load(p.read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError("--audit-webhook-config-file", [f"{p}: not readable as a kubeconfig-format file ({exc}); "
                                                          "write one with `gpupoc audit webhook up`"]) from None
    contexts = {c.get("name"): c.get("context") or {} for c in doc.get("contexts") or []}
    ctx = contexts.get(doc.get("current-context")) or (next(iter(contexts.values()), {}) if contexts else {})
    clusters = {c.get("name"): c.get("cluster") or {} for c in doc.get("clusters") or []}
    users = {u.get("name"): u.get("user") or {} for u in doc.get("users") or []}
    cluster = clusters.get(ctx.get("cluster")) or next(iter(clusters.values()), {})
    user = users.get(ctx.get("user")) or {}
    if not cluster.get("server"):
        raise ConfigError("--audit-webhook-config-file", [f"{p}: clusters[].cluster.server: missing; name the "
                                                          "receiver's URL there"])
    ca = cluster.get("certificate-authority-data")
    ca_pem = base64.b64decode(ca) if ca else (Path(cluster["certificate-authority"]).read_bytes()
                                              if cluster.get("certificate-authority") else None)
    return WebhookConfig(server=cluster["server"], token=user.get("token"), ca_pem=ca_pem,
                         insecure=bool(cluster.get("insecure-skip-tls-verify")), **batch)


class WebhookBackend:
    """An ``AuditLog`` sink (``backend(event)``) that batches events to the webhook on its own thread."""

    def __init__(self, cfg: WebhookConfig):
        self.cfg = cfg
        self._buffer: deque[dict] = deque()
        self._cond = threading.Condition()
        self._first_at: float | None = None
        self._stopping = False
        self.sent = 0
        self.dropped = 0
        self._thread = threading.Thread(target=self._run, name="audit-webhook", daemon=True)
        self._tls = self._context()

    def _context(self) -> ssl.SSLContext | None:
        if not self.cfg.server.startswith("https"):
            return None
        if self.cfg.insecure:
            return ssl._create_unverified_context()  # noqa: S323 - the config asked for insecure-skip-tls-verify
        return ssl.create_default_context(cadata=self.cfg.ca_pem.decode()) if self.cfg.ca_pem else \
            ssl.create_default_context()

    def start(self) -> "WebhookBackend":
        self._thread.start()
        return self

    def __call__(self, event: dict) -> None:
        with self._cond:
            if len(self._buffer) >= self.cfg.buffer_size:
                self.dropped += 1
                return
            first = not self._buffer
            if first:
                self._first_at = time.monotonic()
            self._buffer.append(event)
            if first or len(self._buffer) >= self.cfg.max_size:  # the first starts the batch's max-wait clock
                self._cond.notify()

    def close(self, timeout: float = 10.0) -> None:
        """Flush what is buffered (one attempt per batch) and stop the thread."""
        with self._cond:
            self._stopping = True
            self._cond.notify()
        if self._thread.is_alive():
            self._thread.join(timeout)

    def _next_batch(self) -> list[dict] | None:
        with self._cond:
            while True:
                due = self._first_at is not None and time.monotonic() - self._first_at >= self.cfg.max_wait_s
                if len(self._buffer) >= self.cfg.max_size or (self._buffer and (due or self._stopping)):
                    batch = [self._buffer.popleft() for _ in range(min(self.cfg.max_size, len(self._buffer)))]
                    self._first_at = time.monotonic() if self._buffer else None
                    return batch
                if self._stopping:
                    return None
                wait = self.cfg.max_wait_s - (time.monotonic() - self._first_at) if self._first_at else None
                self._cond.wait(timeout=max(wait, 0.01) if wait is not None else None)

    def _run(self) -> None:
        while (batch := self._next_batch()) is not None:
            self._send(batch)

    def _send(self, batch: list[dict]) -> None:
        body = json.dumps({"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "metadata": {},
                           "items": batch}, separators=(",", ":")).encode()
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        if self.cfg.token:
            headers["Authorization"] = f"Bearer {self.cfg.token}"
        backoff, error = self.cfg.initial_backoff_s, ""
        for attempt in range(1, ATTEMPTS + 1):
            try:
                req = urllib.request.Request(self.cfg.server, data=body, method="POST", headers=headers)
                with urllib.request.urlopen(req, timeout=30, context=self._tls) as resp:
                    resp.read()
                self.sent += len(batch)
                return
            except (urllib.error.URLError, OSError) as exc:
                error = str(getattr(exc, "reason", exc))
            if attempt == ATTEMPTS or self._stopping:
                break
            time.sleep(backoff)
            backoff *= BACKOFF_FACTOR
        self.dropped += len(batch)
        log.error("audit webhook %s: %d event(s) dropped after %d attempt(s): %s", self.cfg.server, len(batch),
                  attempt, error)
