"""The bulk submitter's client-side rate: a token bucket of ``qps`` and ``burst``, and retries of throttled answers.

kube-burner sets ``QPS`` and ``Burst`` on its client's ``rest.Config`` (``pkg/config/config.go``,
``restConfig.QPS, restConfig.Burst = QPS, burst``), which client-go turns into a token bucket
(``flowcontrol.NewTokenBucketRateLimiter``): up to ``burst`` requests at once, then ``qps`` per second. A request
the API server refuses for now (429, 503, another 5xx with ``Retry-After``) is sent again under the project's one
retry policy (``gpupoc.common.api_retry``): after the seconds ``Retry-After`` says, else after a back-off with
jitter, each retry taking its own token.

A request that got no answer (the connection broke or the answer did not come within the client's timeout,
``SourceUnavailable``) is sent again too, after the policy's back-off: on a loaded API server a shard's creation
must not end at the first late answer. Such a request may have been carried out, so the answer says so
(``after_unanswered``): a create sent again under the same name that is refused as AlreadyExists (409) was the
shard's own (``bulk_shard``). When the policy runs out, the last answer comes back with ``gave_up`` naming the
endpoint and the fix, for the shard's record.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field, replace
from typing import Awaitable, Callable

from gpupoc.common.api_retry import DEFAULT_POLICY, Backoff, RetryPolicy
from gpupoc.exceptions import SourceUnavailable


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
    gave_up: str = ""  # the retry policy ran out on this answer: the endpoint, what was tried, the fix

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
               sleep: Callable[[float], Awaitable[None]] = asyncio.sleep, endpoint: str = "API request",
               policy: RetryPolicy = DEFAULT_POLICY) -> Answer:
    """Send ``request`` under the bucket; an answer refused for now, or none at all, is sent again as the retry
    policy says. The last answer is returned (none at all: status 0 with the reason as its message), with
    ``gave_up`` set when the policy ran out."""
    backoff = Backoff(endpoint, policy, bucket.clock)
    unanswered = False
    while True:
        await bucket.acquire()
        stats.sent += 1
        try:
            answer = replace(await request(), after_unanswered=unanswered)
        except SourceUnavailable as exc:
            stats.unanswered += 1
            unanswered = True
            answer = Answer(0, {"message": f"no answer: {exc.reason}"}, after_unanswered=True)
        wait = backoff.next_wait(answer.status, answer.headers or {}, answer.message if not answer.ok else "")
        if wait is None:
            return replace(answer, gave_up=str(backoff.error())) if backoff.spent else answer
        if answer.status:
            stats.refused += 1
            stats.retry_after_s += wait
        await sleep(wait)
