"""The workload program's serve and load modes, run for real on a loopback port."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import urllib.request

from gpupoc.workload.lag import SERVE_MS_HEADER
from gpupoc.workload.serving import Histogram
from tests.waiting import wait_for


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_ready(url: str, proc: subprocess.Popen, step_seconds: float = 60.0) -> None:
    """Until /healthz answers 200 (a stall guard: the model trains for a fraction of a second); a refused
    connection is no answer yet, an exited server fails at once with its output."""
    def status() -> int:
        assert proc.poll() is None, proc.stdout.read()
        with urllib.request.urlopen(url, timeout=1) as resp:
            return resp.status

    wait_for(f"{url} to answer 200", status, lambda code: code == 200, step_seconds=step_seconds, poll=0.1,
             transient=(OSError,))


def test_the_histogram_counts_every_observation_into_cumulative_buckets():
    h = Histogram()
    for seconds in (0.001, 0.02, 0.3, 20.0):
        h.observe("/v1/predict", 200, seconds)
    text = h.exposition()
    assert 'gpupoc_serve_request_duration_seconds_bucket{le="0.005"} 1' in text
    assert 'gpupoc_serve_request_duration_seconds_bucket{le="0.5"} 3' in text
    assert 'gpupoc_serve_request_duration_seconds_bucket{le="+Inf"} 4' in text
    assert 'gpupoc_serve_requests_total{path="/v1/predict",code="200"} 4' in text


def test_serve_answers_predictions_metrics_and_load_writes_per_second_rows(tmp_path):
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "gpupoc.workload", "serve", "--port", str(port), "--host",
                             "127.0.0.1", "--train-seconds", "0.1"], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_ready(f"{base}/healthz", proc)
        req = urllib.request.Request(f"{base}/v1/predict", data=json.dumps({"instances": [[0.5] * 16] * 3}).encode(),
                                     headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(req, timeout=5) as resp:
            predictions = json.loads(resp.read())["predictions"]
            own_ms = float(resp.headers[SERVE_MS_HEADER])
        assert len(predictions) == 3 and set(predictions) <= {0, 1}
        assert own_ms >= 0, "every prediction carries the server's own time to answer it"
        bad = urllib.request.Request(f"{base}/v1/predict", data=b'{"instances": "no"}')
        try:
            urllib.request.urlopen(bad, timeout=5)
            raise AssertionError("a malformed body was accepted")
        except urllib.error.HTTPError as exc:
            assert exc.code == 400 and "instances" in exc.read().decode()
        out = tmp_path / "load.jsonl"
        subprocess.run([sys.executable, "-m", "gpupoc.workload", "load", "--target", f"{base}/v1/predict",
                        "--rate", "4", "--duration", "2", "--out", str(out)], check=True, capture_output=True,
                       timeout=60)
        rows = [json.loads(line) for line in out.read_text().splitlines()]
        assert [r["second"] for r in rows] == [0, 1] and all(r["target"].endswith("/v1/predict") for r in rows)
        assert rows[0]["ts"] <= rows[1]["ts"] and rows[0]["ts"].endswith("+00:00")
        assert all(r["sent"] == 4 and r["availability_pct"] == 100.0 and r["p95_ms"] is not None for r in rows)
        assert all(r["server_p95_ms"] is not None and r["judged_p95_ms"] is not None and "late_sent" in r
                   and "late_read" in r for r in rows), "each row says what the replica's own time was"
        with urllib.request.urlopen(f"{base}/metrics", timeout=5) as resp:
            metrics = resp.read().decode()
        assert 'gpupoc_serve_requests_total{path="/v1/predict",code="400"} 1' in metrics
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_load_counts_a_target_that_does_not_answer_as_unavailable(tmp_path):
    out = tmp_path / "load.jsonl"
    subprocess.run([sys.executable, "-m", "gpupoc.workload", "load", "--target", f"http://127.0.0.1:{free_port()}/",
                    "--rate", "2", "--duration", "1", "--out", str(out)], check=True, capture_output=True, timeout=60)
    [row] = [json.loads(line) for line in out.read_text().splitlines()]
    assert row["availability_pct"] == 0.0 and row["ok"] == 0 and row["p95_ms"] is None
