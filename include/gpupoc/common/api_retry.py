"""One retry policy for every client of the API server: throttled (429) and unavailable (503) answers.

kube-apiserver answers 429 TooManyRequests when API Priority and Fairness sheds a request and 503 (or another
5xx) while it or etcd is briefly unavailable, each with ``Retry-After`` in whole seconds. client-go sends such
a request again after the seconds the header says. Here every client (the sync caller, the async bulk shards
and release, the preflight, the triggers' shared pod lists) asks a ``Backoff`` what to do with each answer:

- 429 and 503 are sent again, other 5xx only when they carry ``Retry-After`` (as client-go decides);
- the wait is ``Retry-After`` when given (at most ``max_wait_s``), else an exponential back-off from
  ``base_s`` with jitter, so many clients refused at once do not come back at once;
- at most ``attempts`` sends and ``max_total_s`` seconds from the first send; then ``error`` names the endpoint,
  the last answer and the fix (``ApiGaveUp``, a ``SourceUnavailable``: a clear error, never a traceback).

The clock and the random draw are injected, so a test runs the policy without waiting.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field
from typing import Any, Callable

from gpupoc.exceptions import SourceUnavailable

ALWAYS_RETRIED = frozenset({429, 503})

FIXES = {
    429: ("the API server throttled this identity (API Priority and Fairness): lower the plan's submission qps "
          "and burst, give the identity's flow schema a larger priority level, or run again when the cluster is "
          "less busy"),
    0: "check that the API server is up (`kubectl get --raw /readyz`) and reachable from here, then run again",
}
FIX_UNAVAILABLE = ("the API server (or its etcd) stayed unavailable: check its health (`kubectl get --raw "
                   "/readyz?verbose`) and run again once it answers")


class ApiGaveUp(SourceUnavailable):
    """A request refused for now (429, 5xx, no answer) until the policy's sends or time ran out."""

    def __init__(self, endpoint: str, reason: str, fix: str, status: int):
        super().__init__(endpoint, reason, fix)
        self.status = status


def retry_after_seconds(headers: Any) -> float | None:
    """The ``Retry-After`` header in whole seconds (an HTTP date or anything else: None)."""
    raw = headers.get("Retry-After") if headers is not None else None
    try:
        seconds = int(str(raw).strip())
    except (TypeError, ValueError):
        return None
    return float(seconds) if seconds >= 0 else None


@dataclass(frozen=True)
class RetryPolicy:
    """How long a client insists: sends, one wait, all waits, the back-off's start and jitter."""

    attempts: int = 10          # sends at most, the first included (client-go: 10 retries)
    base_s: float = 0.5         # the first back-off when the answer says no Retry-After
    max_wait_s: float = 10.0    # one wait at most (a longer Retry-After is cut to it)
    max_total_s: float = 90.0   # from the first send to the last
    jitter: float = 0.2         # a back-off is shortened by up to this share, drawn at random
    always: frozenset[int] = ALWAYS_RETRIED  # statuses sent again without Retry-After

    def __post_init__(self) -> None:
        if self.attempts < 1 or self.base_s < 0 or self.max_wait_s < 0 or self.max_total_s < 0 \
                or not 0 <= self.jitter < 1:
            raise ValueError(f"RetryPolicy: attempts >= 1, waits >= 0 and 0 <= jitter < 1 expected, got {self}")

    def retryable(self, status: int, retry_after_s: float | None) -> bool:
        """Whether an answer is refused only for now: 429 and 503 always, another 5xx with Retry-After."""
        return status in self.always or ((status == 429 or 500 <= status <= 599) and retry_after_s is not None)

    def backoff_s(self, retry: int, draw: float) -> float:
        """The ``retry``-th back-off (0 first) without Retry-After; ``draw`` in [0, 1) sets the jitter."""
        return min(self.max_wait_s, self.base_s * 2 ** retry) * (1.0 - self.jitter * draw)


DEFAULT_POLICY = RetryPolicy()
# through the API server's proxy (``services/x/proxy``, ``pods/x/proxy``) a 503 is the backend's own answer or
# the proxy's "no endpoints available": sent again only when it says Retry-After, as client-go does
PROXY_POLICY = RetryPolicy(always=frozenset())


def policy_for(path: str, policy: RetryPolicy = DEFAULT_POLICY) -> RetryPolicy:
    """``policy``, or ``PROXY_POLICY`` for a request through the API server's proxy."""
    return PROXY_POLICY if "proxy" in path.split("?")[0].split("/") else policy


@dataclass
class Backoff:
    """One request's retries under ``policy``: ask ``next_wait`` after each answer; None means send no more
    (the answer is final, or ``spent`` says the policy ran out: raise or report ``error()``)."""

    endpoint: str
    policy: RetryPolicy = DEFAULT_POLICY
    clock: Callable[[], float] = time.monotonic
    rng: random.Random = field(default_factory=random.Random)
    sends: int = 0
    waited_s: float = 0.0
    spent: bool = False
    last_status: int = 0
    last_message: str = ""
    started: float | None = None

    def next_wait(self, status: int, headers: Any = None, message: str = "", for_now: bool = False) -> float | None:
        """After an answer (status 0: none came): seconds to wait before sending again, or None. ``for_now``:
        the caller knows the refusal is for now (a watch's 5xx ERROR event: a reflector always watches again)."""
        now = self.clock()
        self.started = now if self.started is None else self.started
        self.sends += 1
        self.last_status, self.last_message = status, message
        after = retry_after_seconds(headers)
        if status != 0 and not for_now and not self.policy.retryable(status, after):
            return None
        wait = min(after, self.policy.max_wait_s) if after is not None else \
            self.policy.backoff_s(self.sends - 1, self.rng.random())
        if self.sends >= self.policy.attempts or now - self.started + wait > self.policy.max_total_s:
            self.spent = True
            return None
        self.waited_s += wait
        return wait

    def reset(self) -> None:
        """A success: the next refusal starts the back-off afresh (a long-lived watch's loop)."""
        self.sends, self.started, self.spent = 0, None, False

    def error(self) -> ApiGaveUp:
        """The clear error once ``spent``: the endpoint, the last answer, how long it was tried, the fix."""
        what = f"HTTP {self.last_status}" if self.last_status else "no answer"
        said = f" ({self.last_message[:200]})" if self.last_message else ""
        elapsed = (self.clock() - self.started) if self.started is not None else 0.0
        reason = (f"{what}{said} after {self.sends} send(s) over {elapsed:.0f} s "
                  f"({self.waited_s:.0f} s waited as the server asked or backing off)")
        fix = FIXES.get(self.last_status, FIX_UNAVAILABLE)
        return ApiGaveUp(self.endpoint, reason, fix, self.last_status)


def _refusal(exc: Exception) -> tuple[int, Any, str] | None:
    """(status, headers, reason) of a client's HTTP error (``kubernetes``' and ``kubernetes_asyncio``'s
    ``ApiException``: ``status``, ``headers``, ``reason``); None for anything else."""
    status = getattr(exc, "status", None)
    if not isinstance(status, int) or isinstance(status, bool):
        return None
    return status, getattr(exc, "headers", None), str(getattr(exc, "reason", "") or "")


def _wait_or_raise(backoff: Backoff, exc: Exception) -> float:
    """How long to wait before sending again after ``exc``; raises ``exc`` itself when it is final, and
    ``ApiGaveUp`` when the policy ran out."""
    refusal = _refusal(exc)
    wait = backoff.next_wait(*refusal) if refusal is not None else None
    if wait is None:
        if backoff.spent:
            raise backoff.error() from None
        raise exc
    return wait


def call_retrying(fn: Callable[[], Any], endpoint: str, *, policy: RetryPolicy = DEFAULT_POLICY,
                  sleep: Callable[[float], None] = time.sleep, clock: Callable[[], float] = time.monotonic) -> Any:
    """``fn()`` of a client that raises on an HTTP error, sent again while the error is refused for now; the
    error itself when it is final, ``ApiGaveUp`` when the policy ran out."""
    backoff = Backoff(endpoint, policy, clock)
    while True:
        try:
            return fn()
        except Exception as exc:
            wait = _wait_or_raise(backoff, exc)
        sleep(wait)


async def acall_retrying(fn: Callable[[], Any], endpoint: str, *, policy: RetryPolicy = DEFAULT_POLICY,
                         sleep: Callable[[float], Any] | None = None,
                         clock: Callable[[], float] = time.monotonic) -> Any:
    """``call_retrying`` for a coroutine function ``fn`` (``sleep``: an async sleep, asyncio's by default)."""
    import asyncio

    backoff = Backoff(endpoint, policy, clock)
    while True:
        try:
            return await fn()
        except Exception as exc:
            wait = _wait_or_raise(backoff, exc)
        await (sleep or asyncio.sleep)(wait)
