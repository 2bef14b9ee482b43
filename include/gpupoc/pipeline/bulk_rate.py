"""The bulk submitter's client-side rate: a token bucket of ``qps`` and ``burst``, and retries of throttled answers.

kube-burner sets ``QPS`` and ``Burst`` on its client's ``rest.Config`` (``pkg/config/config.go``,
``restConfig.QPS, restConfig.Burst = QPS, burst``), which client-go turns into a token bucket
(``flowcontrol.NewTokenBucketRateLimiter``): up to ``burst`` requests at once, then ``qps`` per second. A request
the API server refuses with 429 (or a 5xx) carrying ``Retry-After`` is sent again after the seconds it says, as
client-go does (``gpupoc.pipeline.k8s.retry_after``), each retry taking its own token.

A request that got no answer (the connection broke or the answer did not come within the client's timeout,
``SourceUnavailable``) is sent again too, after a wait that doubles from ``NO_ANSWER_WAIT_SECONDS``: on a
loaded API server a shard's creation must not end at the first late answer. Such a request may have been
carried out, so the answer says so (``after_unanswered``): a create sent again under the same name that is
refused as AlreadyExists (409) was the shard's own (``bulk_shard``).
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field, replace
from typing import Awaitable, Callable

from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline.k8s import MAX_RETRIES, MAX_RETRY_AFTER_SECONDS, retry_after

NO_ANSWER_WAIT_SECONDS = 1.0


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
    after_unanswered: bool = False  # an earlier send of the same request got no answer (it may have been done)

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
    unanswered: int = 0  # requests that got no answer (broken connection, the client's timeout)

    def to_dict(self) -> dict:
        return {"sent": self.sent, "refused": self.refused, "retry_after_seconds": round(self.retry_after_s, 3),
                "unanswered": self.unanswered}


async def send(bucket: TokenBucket, request: Callable[[], Awaitable[Answer]], stats: Throttling,
               sleep: Callable[[float], Awaitable[None]] = asyncio.sleep) -> Answer:
    """Send ``request`` under the bucket; a 429/5xx with ``Retry-After`` is sent again after that many seconds,
    a request without an answer after a doubling wait (at most ``MAX_RETRIES`` times either way). The last
    answer is returned; none at all is status 0 with the reason as its message."""
    answer, unanswered, no_answer_wait = Answer(0), False, NO_ANSWER_WAIT_SECONDS
    for attempt in range(MAX_RETRIES + 1):
        await bucket.acquire()
        stats.sent += 1
        try:
            answer = replace(await request(), after_unanswered=unanswered)
            wait = retry_after(answer.status, answer.headers or {})
        except SourceUnavailable as exc:
            stats.unanswered += 1
            unanswered, wait = True, no_answer_wait
            answer = Answer(0, {"message": f"no answer: {exc.reason}"}, after_unanswered=True)
            no_answer_wait = min(no_answer_wait * 2, MAX_RETRY_AFTER_SECONDS)
        if wait is None or attempt == MAX_RETRIES:
            return answer
        if answer.status:
            stats.refused += 1
            stats.retry_after_s += wait
        await sleep(wait)
    return answer
