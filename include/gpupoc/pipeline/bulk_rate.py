"""The bulk submitter's client-side rate: a token bucket of ``qps`` and ``burst``, and retries of throttled answers.

kube-burner sets ``QPS`` and ``Burst`` on its client's ``rest.Config`` (``pkg/config/config.go``,
``restConfig.QPS, restConfig.Burst = QPS, burst``), which client-go turns into a token bucket
(``flowcontrol.NewTokenBucketRateLimiter``): up to ``burst`` requests at once, then ``qps`` per second. A request
the API server refuses with 429 (or a 5xx) carrying ``Retry-After`` is sent again after the seconds it says, as
client-go does (``gpupoc.pipeline.k8s.retry_after``), each retry taking its own token.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Awaitable, Callable

from gpupoc.pipeline.k8s import MAX_RETRIES, retry_after


@dataclass
class TokenBucket:
    """``burst`` tokens, refilled at ``qps`` per second; ``acquire`` waits for one (reserving it first, so
    concurrent callers queue in order, as client-go's limiter does)."""

    qps: float
    burst: int
    clock: Callable[[], float] = time.monotonic
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep
    tokens: float = field(init=False)
    last: float = field(init=False)
    waited_s: float = field(default=0.0, init=False)  # total time callers waited for a token

    def __post_init__(self) -> None:
        if self.qps <= 0 or self.burst < 1:
            raise ValueError(f"qps must be > 0 and burst >= 1 (got qps={self.qps}, burst={self.burst})")
        self.tokens, self.last = float(self.burst), self.clock()

    async def acquire(self) -> None:
        now = self.clock()
        self.tokens = min(float(self.burst), self.tokens + (now - self.last) * self.qps)
        self.last = now
        self.tokens -= 1.0
        if self.tokens < 0:
            wait = -self.tokens / self.qps
            self.waited_s += wait
            await self.sleep(wait)


@dataclass(frozen=True)
class Answer:
    """One API answer as the bulk submitter needs it: status, headers, parsed body."""

    status: int
    body: dict | None = None
    headers: dict | None = None

    @property
    def ok(self) -> bool:
        return 200 <= self.status < 300

    @property
    def message(self) -> str:
        b = self.body or {}
        return str(b.get("message") or f"HTTP {self.status}")


@dataclass
class Throttling:
    """What the rate cost: requests sent, answers refused with Retry-After, seconds waited on them."""

    sent: int = 0
    refused: int = 0
    retry_after_s: float = 0.0

    def to_dict(self) -> dict:
        return {"sent": self.sent, "refused": self.refused, "retry_after_seconds": round(self.retry_after_s, 3)}


async def send(bucket: TokenBucket, request: Callable[[], Awaitable[Answer]], stats: Throttling,
               sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> Answer:
    """Send ``request`` under the bucket; a 429/5xx with ``Retry-After`` is sent again after that many seconds
    (at most ``MAX_RETRIES`` times), the last answer returned either way."""
    answer = Answer(0)
    for attempt in range(MAX_RETRIES + 1):
        await bucket.acquire()
        stats.sent += 1
        answer = await request()
        wait = retry_after(answer.status, answer.headers or {})
        if wait is None or attempt == MAX_RETRIES:
            return answer
        stats.refused += 1
        stats.retry_after_s += wait
        await sleep(wait)
    return answer
