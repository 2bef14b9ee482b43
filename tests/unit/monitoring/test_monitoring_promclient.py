"""monitoring/promclient: Prometheus HTTP API answers, errors that name the URL, range chunking."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import pytest

from gpupoc.exceptions import SourceUnavailable
from gpupoc.monitoring.promclient import MAX_POINTS, PrometheusClient


class FakePrometheus(BaseHTTPRequestHandler):
    calls: list = []

    def do_GET(self):  # noqa: N802
        u = urlsplit(self.path)
        q = {k: v[0] for k, v in parse_qs(u.query).items()}
        FakePrometheus.calls.append((u.path, q))
        if q.get("query") == "bad(":
            code, body = 400, {"status": "error", "errorType": "bad_data", "error": "1:5: parse error"}
        elif u.path == "/api/v1/query":
            code, body = 200, {"status": "success", "data": {"resultType": "vector", "result": [
                {"metric": {"namespace": "team-nlp"}, "value": [1.0, "42"]}]}}
        elif u.path == "/api/v1/query_range":
            start, end = float(q["start"]), float(q["end"])
            code, body = 200, {"status": "success", "data": {"resultType": "matrix", "result": [
                {"metric": {"gpu": "0"}, "values": [[start, "1"], [end, "2"]]}]}}
        else:
            code, body = 200, b"<html>not prometheus</html>"
        raw = body if isinstance(body, bytes) else json.dumps(body).encode()
        self.send_response(code)
        self.send_header("Content-Length", str(len(raw)))
        self.end_headers()
        self.wfile.write(raw)

    def log_message(self, *args):
        pass


@pytest.fixture
def prom():
    FakePrometheus.calls = []
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), FakePrometheus)
    t = threading.Thread(target=httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    t.start()
    yield PrometheusClient(f"http://127.0.0.1:{httpd.server_address[1]}", timeout=5)
    httpd.shutdown()
    httpd.server_close()


def test_instant_query_returns_the_vector(prom):
    assert prom.query("sum(x)") == [{"metric": {"namespace": "team-nlp"}, "value": [1.0, "42"]}]


def test_error_answer_keeps_type_and_message(prom):
    with pytest.raises(SourceUnavailable) as err:
        prom.query("bad(")
    assert "bad_data" in err.value.reason and "parse error" in err.value.reason
    assert err.value.endpoint == f"{prom.url}/api/v1/query"


def test_non_json_answer_says_so(prom):
    prom_ui = PrometheusClient(prom.url + "/ui")
    with pytest.raises(SourceUnavailable, match="not JSON"):
        prom_ui.query("up")


def test_unreachable_prometheus_names_the_url_and_the_fix():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    client = PrometheusClient(f"http://127.0.0.1:{port}", timeout=2)
    with pytest.raises(SourceUnavailable) as err:
        client.query_range("up", 0, 60, 15)
    assert err.value.endpoint == f"http://127.0.0.1:{port}/api/v1/query_range"
    assert "unreachable" in err.value.reason
    assert "gpupoc stack up" in err.value.fix and "gpupoc_prometheus" in err.value.fix
    assert not client.ready()


def test_long_range_is_split_and_merged_per_series(prom):
    step = 1.0
    end = 2.5 * MAX_POINTS
    out = prom.query_range("up", 0, end, step)
    ranges = [(float(q["start"]), float(q["end"])) for p, q in FakePrometheus.calls if p == "/api/v1/query_range"]
    assert len(ranges) == 3
    assert all((e - s) / step < MAX_POINTS for s, e in ranges)
    assert ranges[0][0] == 0 and ranges[-1][1] == end
    assert len(out) == 1 and len(out[0]["values"]) == 6


def test_rejects_a_non_url():
    with pytest.raises(SourceUnavailable, match="not a URL"):
        PrometheusClient("prometheus:9090")
