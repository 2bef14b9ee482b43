"""One watch stream over the sync ``kubernetes`` client: its events one by one, an HTTP refusal as one ERROR event.

A watch answers with one JSON event per line (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR) until the server's
``timeoutSeconds``; a refusal (403, 410, 429 ...) comes as an HTTP status, which is given here as the ERROR event
a watch would carry, with its ``code`` and the ``Retry-After`` the server asked for. ``StreamHandle.close`` ends
a stream from another thread (the reader's next read fails and the stream ends quietly).
"""

from __future__ import annotations

import socket
import threading
from dataclasses import dataclass, field
from typing import Any, Iterator

from gpupoc.common import fastjson
from gpupoc.common.api_retry import retry_after_seconds

CONNECT_TIMEOUT_S = 10.0


@dataclass
class StreamHandle:
    """The open response of a stream (closed by ``close`` from any thread) and the bytes it read."""

    response: Any = None
    closed: bool = False
    bytes_read: int = 0
    _lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    def close(self) -> None:
        """End the stream now: the socket is shut down first, since closing the response waits for the lock
        of a reader blocked on the socket (until the server's next line: minutes on a quiet watch)."""
        with self._lock:
            self.closed = True
            if self.response is not None:
                sock = _socket_of(self.response)
                try:
                    if sock is not None:
                        sock.shutdown(socket.SHUT_RDWR)
                    self.response.close()
                except Exception:  # noqa: BLE001 - closing a socket another thread reads is best effort
                    pass


def _socket_of(response: Any) -> socket.socket | None:
    """The socket under a urllib3 response (http.client hands it from the connection to the response's
    file: ``response._fp.fp.raw._sock``), None when not found."""
    raw = getattr(getattr(getattr(response, "_fp", None), "fp", None), "raw", None)
    sock = getattr(raw, "_sock", None) or getattr(getattr(response, "connection", None), "sock", None)
    return sock if isinstance(sock, socket.socket) else None


def _lines(response: Any, handle: StreamHandle) -> Iterator[bytes]:
    """The stream's lines, whatever the chunking."""
    pending = b""
    for chunk in response.stream(amt=None, decode_content=False):
        handle.bytes_read += len(chunk)
        pending += chunk
        *whole, pending = pending.split(b"\n")
        yield from (line for line in whole if line.strip())
    if pending.strip():
        yield pending


def _refusal(status: int, data: Any, headers: Any) -> dict:
    """The ERROR event for an HTTP refusal: the Status the server sent (or one made of its text)."""
    raw = data if isinstance(data, (bytes, str)) else b""
    text = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else raw
    try:
        status_obj = fastjson.loads(text) if fastjson.looks_like_document(text) else {}
    except ValueError:
        status_obj = {}
    if not isinstance(status_obj, dict):
        status_obj = {}
    obj = {"kind": "Status", "message": text.strip()[:300], **status_obj, "code": status_obj.get("code") or status}
    after = retry_after_seconds(headers)
    if after is not None:
        obj["retryAfterSeconds"] = after
    return {"type": "ERROR", "object": obj}


def watch_events(api_client: Any, path: str, query: list[tuple[str, str]], read_timeout_s: float,
                 handle: StreamHandle) -> Iterator[dict]:
    """The events of one watch (``query`` already says ``watch=true`` and where to start)."""
    from kubernetes.client.exceptions import ApiException

    try:
        response = api_client.call_api(
            path, "GET", query_params=query, header_params={"Accept": "application/json"},
            auth_settings=["BearerToken"], _preload_content=False,
            _request_timeout=(CONNECT_TIMEOUT_S, read_timeout_s))
    except ApiException as exc:
        if exc.status == 0:
            raise ConnectionError(str(exc.reason)) from None
        yield _refusal(exc.status, exc.body, exc.headers)
        return
    with handle._lock:
        if handle.closed:
            response.close()
            return
        handle.response = response
    try:
        for line in _lines(response, handle):
            yield fastjson.loads(line)
    except Exception:  # noqa: BLE001 - a stream closed by ``close`` or cut by the server just ends
        if not handle.closed:
            raise
    finally:
        response.release_conn()
