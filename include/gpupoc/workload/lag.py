"""The load generator's own lag, told apart from the replica's time to answer (docs/services.md).

As load generators that correct for coordinated omission do, every request keeps four times: when the
schedule said to send it (``due``), when it was sent, when its answer was read, and the replica's own time to
answer, measured inside the server and returned in the ``X-Gpupoc-Serve-Ms`` header. A request sent more than
``bound_ms`` after it was due was *sent late*; an answer whose reading took more than ``bound_ms`` beyond the
replica's own time was *read late*. Either is *distorted*: the client's clock says more of the harness (the
generator's threads, the machine it shares, the path to the replica) than of the platform, so its latency is
judged on the replica's own time instead. A request that failed (non-2xx, refused, unanswered) is a failure
whatever its lag: lag excuses a slow reading, never an error.

``second_row`` sums one second's requests into the row the ``load`` mode writes; it is pure, so the
accounting is tested with synthetic timings (tests/unit/workload/test_lag.py).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable

import numpy as np

SERVE_MS_HEADER = "X-Gpupoc-Serve-Ms"
DEFAULT_LAG_BOUND_MS = 100.0


def serve_ms(value: str | None) -> float | None:
    """The replica's own time from its header (None when absent or not a number)."""
    try:
        ms = float(value) if value is not None else None
    except ValueError:
        return None
    return ms if ms is not None and ms >= 0 else None


@dataclass(frozen=True)
class Sample:
    """One request's times (seconds of one monotonic clock) and its answer."""

    due: float                      # its slot in the schedule
    sent: float                     # when the generator sent it
    read: float                     # when the answer was read (or the request gave up)
    status: int                     # HTTP status; 0 when nothing answered (refused, timed out)
    server_ms: float | None = None  # the replica's own time to answer (X-Gpupoc-Serve-Ms)

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def client_ms(self) -> float:
        return (self.read - self.sent) * 1000.0

    @property
    def send_lag_ms(self) -> float:
        return max(0.0, (self.sent - self.due) * 1000.0)

    @property
    def read_lag_ms(self) -> float | None:
        """How much longer the client took than the replica (None without the replica's time)."""
        return None if self.server_ms is None or not self.status else max(0.0, self.client_ms - self.server_ms)

    def sent_late(self, bound_ms: float) -> bool:
        return self.send_lag_ms > bound_ms

    def read_late(self, bound_ms: float) -> bool:
        lag = self.read_lag_ms
        return lag is not None and lag > bound_ms

    def distorted(self, bound_ms: float) -> bool:
        return self.sent_late(bound_ms) or self.read_late(bound_ms)

    def judged_ms(self, bound_ms: float) -> float | None:
        """The latency the SLO judges: the client's reading when undistorted, else the replica's own time
        (None for a failed request, or a distorted one whose replica named no time)."""
        if not self.ok:
            return None
        return self.server_ms if self.distorted(bound_ms) else self.client_ms


def percentile(values: list[float], q: float) -> float | None:
    return round(float(np.percentile(values, q)), 3) if values else None


def second_row(samples: Iterable[Sample], bound_ms: float = DEFAULT_LAG_BOUND_MS) -> dict:
    """One second of requests as the ``load`` mode's row: what the client saw (``p50_ms``..``p99_ms`` of the
    answered requests), the harness's lag (``late_sent``, ``late_read``, ``distorted``, ``max_send_lag_ms``),
    the replica's own time (``server_p50_ms``..) and the latencies the SLO judges (``judged_p95_ms``,
    ``judged_p99_ms``)."""
    samples = list(samples)
    ok = [s for s in samples if s.ok]
    client = [s.client_ms for s in ok]
    server = [s.server_ms for s in ok if s.server_ms is not None]
    judged = [ms for ms in (s.judged_ms(bound_ms) for s in ok) if ms is not None]
    return {
        "sent": len(samples), "ok": len(ok),
        "unready": sum(1 for s in samples if s.status == 503),
        "unanswered": sum(1 for s in samples if s.status == 0),
        "availability_pct": round(100.0 * len(ok) / len(samples), 2) if samples else 0.0,
        "p50_ms": percentile(client, 50), "p95_ms": percentile(client, 95), "p99_ms": percentile(client, 99),
        "late_sent": sum(1 for s in samples if s.sent_late(bound_ms)),
        "late_read": sum(1 for s in samples if s.read_late(bound_ms)),
        "distorted": sum(1 for s in samples if s.distorted(bound_ms)),
        "max_send_lag_ms": round(max((s.send_lag_ms for s in samples), default=0.0), 3),
        "server_p50_ms": percentile(server, 50), "server_p95_ms": percentile(server, 95),
        "server_p99_ms": percentile(server, 99),
        "judged_p95_ms": percentile(judged, 95), "judged_p99_ms": percentile(judged, 99),
        "lag_bound_ms": bound_ms,
    }
