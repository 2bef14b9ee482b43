"""Closing a watch while its stream waits for the server's next line (``StreamHandle.close`` from another
thread): the watch cache's ``stop`` relies on it to end the observer's watches at once."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from kubernetes import client

from gpupoc.pipeline.watch_stream import StreamHandle, watch_events

DEADLOCK_GUARD_S = 20  # the server never ends the stream: without a working close, close() never returns


class _Silent(BaseHTTPRequestHandler):
    """A watch that sends one event, then holds the stream open without a word until the test ends."""

    release = threading.Event()

    def do_GET(self):  # noqa: N802
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Transfer-Encoding", "chunked")
        self.end_headers()
        line = b'{"type":"ADDED","object":{"metadata":{"name":"p","resourceVersion":"1"}}}\n'
        self.wfile.write(b"%x\r\n%s\r\n" % (len(line), line))
        self.wfile.flush()
        self.release.wait()

    def log_message(self, *args):
        pass


@pytest.fixture
def silent_server():
    _Silent.release = threading.Event()
    srv = ThreadingHTTPServer(("127.0.0.1", 0), _Silent)
    srv.daemon_threads = True
    threading.Thread(target=srv.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    yield srv
    _Silent.release.set()
    srv.shutdown()
    srv.server_close()


def test_close_ends_a_watch_that_waits_for_the_server_s_next_line(silent_server):
    cfg = client.Configuration()
    cfg.host = f"http://127.0.0.1:{silent_server.server_port}"
    handle = StreamHandle()
    events = watch_events(client.ApiClient(cfg), "/api/v1/pods", [("watch", "true")], 300, handle)
    assert next(events)["type"] == "ADDED"
    reader = threading.Thread(target=lambda: list(events), daemon=True)  # blocked reading the silent stream
    reader.start()
    reader.join(0.5)
    closer = threading.Thread(target=handle.close, daemon=True)
    closer.start()
    closer.join(DEADLOCK_GUARD_S)
    assert not closer.is_alive(), "StreamHandle.close() blocked until the server ended the stream"
    reader.join(DEADLOCK_GUARD_S)
    assert not reader.is_alive(), "the closed watch kept reading"
