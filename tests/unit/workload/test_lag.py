"""The load generator's own lag told apart from the replica's time: synthetic per-request timings (a fake clock
in seconds) summed into the per-second row, and one real request timed by an injected clock."""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from gpupoc.workload.lag import SERVE_MS_HEADER, Sample, second_row, serve_ms
from gpupoc.workload.loadgen import request

BOUND = 100.0


def on_time(i: int, client_ms: float = 20.0, server_ms: float | None = 15.0, status: int = 200) -> Sample:
    """Request ``i`` of a 5-a-second schedule, sent on its slot, read ``client_ms`` later."""
    due = 100.0 + i * 0.2
    return Sample(due=due, sent=due + 0.001, read=due + 0.001 + client_ms / 1000, status=status, server_ms=server_ms)


def sent_late(i: int, lag_ms: float, client_ms: float = 20.0, server_ms: float | None = 15.0,
              status: int = 200) -> Sample:
    due = 100.0 + i * 0.2
    sent = due + lag_ms / 1000
    return Sample(due=due, sent=sent, read=sent + client_ms / 1000, status=status, server_ms=server_ms)


def test_a_second_sent_and_read_on_time_is_judged_on_the_client_s_reading():
    row = second_row([on_time(i, client_ms=20 + i) for i in range(5)], BOUND)
    assert (row["sent"], row["ok"], row["availability_pct"]) == (5, 5, 100.0)
    assert (row["late_sent"], row["late_read"], row["distorted"]) == (0, 0, 0)
    assert row["judged_p99_ms"] == row["p99_ms"] == pytest.approx(23.96, abs=0.01)
    assert row["server_p50_ms"] == 15.0 and row["lag_bound_ms"] == BOUND


def test_requests_the_generator_sent_late_are_counted_apart_and_judged_on_the_replica_s_time():
    # the generator stalled: two requests left 700 ms after their slot and read 900 ms after sending
    row = second_row([on_time(0), on_time(1), on_time(2), sent_late(3, 700, client_ms=900),
                      sent_late(4, 700, client_ms=900)], BOUND)
    assert row["late_sent"] == 2 and row["distorted"] == 2 and row["max_send_lag_ms"] == pytest.approx(700)
    assert row["p99_ms"] > 800, "the client's own reading is kept as it saw it"
    assert row["judged_p95_ms"] < 25 and row["judged_p99_ms"] < 25, "the late ones are judged on the replica's 15 ms"


def test_an_answer_read_late_is_judged_on_the_replica_s_own_time():
    row = second_row([on_time(0, client_ms=650, server_ms=12)] + [on_time(i) for i in range(1, 5)], BOUND)
    assert (row["late_sent"], row["late_read"], row["distorted"]) == (0, 1, 1)
    assert row["p95_ms"] > 500 and row["judged_p95_ms"] <= 20


def test_a_slow_replica_is_not_the_harness_s_lag_and_is_judged_as_it_is():
    slow = [on_time(i, client_ms=905, server_ms=900) for i in range(5)]
    row = second_row(slow, BOUND)
    assert row["distorted"] == 0 and row["judged_p95_ms"] == pytest.approx(905)
    late_and_slow = second_row([sent_late(i, 400, client_ms=2000, server_ms=900) for i in range(5)], BOUND)
    assert late_and_slow["distorted"] == 5 and late_and_slow["judged_p95_ms"] == pytest.approx(900), \
        "a late request is judged on the replica's own time, slow as it is"


def test_an_error_is_never_excused_by_lag():
    row = second_row([sent_late(i, 800, status=0, server_ms=None) for i in range(3)]
                     + [sent_late(3, 800, status=503, server_ms=0.1), on_time(4)], BOUND)
    assert (row["ok"], row["unanswered"], row["unready"], row["availability_pct"]) == (1, 3, 1, 20.0)
    assert row["late_sent"] == 4 and row["judged_p95_ms"] == pytest.approx(20.0)


def test_a_distorted_answer_without_the_replica_s_time_is_not_judged_for_latency():
    row = second_row([sent_late(0, 500, client_ms=900, server_ms=None), on_time(1)], BOUND)
    assert row["distorted"] == 1 and row["judged_p99_ms"] == pytest.approx(20.0)


@pytest.mark.parametrize("value, ms", [("12.5", 12.5), (None, None), ("fast", None), ("-3", None)])
def test_the_replica_s_header_is_read_only_when_it_is_a_time(value, ms):
    assert serve_ms(value) == ms


class _Answer(BaseHTTPRequestHandler):
    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        return

    def do_GET(self):  # noqa: N802 - http.server's naming
        self.send_response(200)
        self.send_header(SERVE_MS_HEADER, "7.5")
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")


def test_a_request_keeps_its_slot_its_send_and_read_times_and_the_replica_s_time():
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Answer)
    threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    ticks = iter([50.4, 50.9])  # sent 400 ms after its slot at 50.0, read 500 ms later
    try:
        s = request(f"http://127.0.0.1:{server.server_address[1]}/v1/predict", 5.0, 50.0, clock=lambda: next(ticks))
    finally:
        server.shutdown()
    assert (s.status, s.server_ms) == (200, 7.5)
    assert s.send_lag_ms == pytest.approx(400) and s.client_ms == pytest.approx(500)
    assert s.sent_late(BOUND) and s.read_late(BOUND) and s.judged_ms(BOUND) == 7.5
