"""How the API server treats its clients under the API behaviour profiles: throttling, latency, watch cuts.

- ``throttled``: a request is refused, before anything is done, with 429 TooManyRequests ("Too many requests,
  please try again later.", as API Priority and Fairness answers) about one time in ten, and every
  ``BURST_EVERY`` seconds for ``BURST_SECONDS`` with 503 ServiceUnavailable or 500 InternalError. Every refusal
  carries ``Retry-After: 1`` and ``details.retryAfterSeconds`` (client-go retries 429 and 5xx answers that carry
  Retry-After, up to 10 times). The same caller's same request is refused at most ``MAX_REFUSALS_IN_A_ROW``
  times in a row, so a client that retries gets through.
- ``slow-api``: every request waits 50-250 ms before it is served.
- ``watch-cuts``: the server ends every watch stream after 2-5 s (clients re-watch from the last
  resourceVersion they saw).
- ``watch-expiry``: the history is compacted every few seconds and open watch streams end with 410 Gone
  (``compaction``): clients list again and watch from the new resourceVersion.
Draws come from one generator seeded with the behaviour seed. Health, version and metrics endpoints, and the
simulator's own node-failure endpoints, are exempt.
"""

from __future__ import annotations

import random
import time
from dataclasses import dataclass, field

from aiohttp import web

from gpupoc.sim.api.compaction import WATCH_LIFE_SECONDS, Compaction
from gpupoc.sim.api.status import StatusError
from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.cluster import ClusterState

RETRY_AFTER_SECONDS = 1
MAX_REFUSALS_IN_A_ROW = 2
THROTTLE_PROBABILITY = 0.1
BURST_EVERY = 20.0
BURST_SECONDS = 1.0
LATENCY_SECONDS = (0.05, 0.25)
WATCH_CUT_SECONDS = (2.0, 5.0)
_MAX_TRACKED = 10_000


@dataclass
class ApiManners:
    """The API profiles of one served cluster and their seeded generator."""

    throttled: bool = False
    slow: bool = False
    watch_cuts: bool = False
    watch_expiry: bool = False
    seed: int = 0
    started: float = field(default_factory=time.monotonic)
    refusals: dict[tuple, int] = field(default_factory=dict)  # (user, method, path) -> refusals in a row
    rng: random.Random = field(init=False)
    compaction: Compaction | None = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(f"{self.seed}/api")
        self.compaction = Compaction(self.started) if self.watch_expiry else None

    @classmethod
    def of(cls, state: ClusterState) -> "ApiManners":
        manners = cls(throttled=state.behaves(Behaviour.THROTTLED), slow=state.behaves(Behaviour.SLOW_API),
                      watch_cuts=state.behaves(Behaviour.WATCH_CUTS),
                      watch_expiry=state.behaves(Behaviour.WATCH_EXPIRY), seed=state.behaviour_seed)
        if manners.compaction is not None:
            compaction = manners.compaction
            state.store.add_listener(lambda change: compaction.advance(time.monotonic(), change.rv - 1))
        return manners

    def in_burst(self, now: float) -> bool:
        since = now - self.started
        return since >= BURST_EVERY and since % BURST_EVERY < BURST_SECONDS

    def refusal(self, user: str, method: str, path: str, now: float | None = None) -> StatusError | None:
        """The answer that refuses this request now, or None to serve it."""
        if not self.throttled:
            return None
        key = (user, method, path)
        refused = self.refusals.get(key, 0)
        now = time.monotonic() if now is None else now
        if refused >= MAX_REFUSALS_IN_A_ROW or not (self.in_burst(now) or self.rng.random() < THROTTLE_PROBABILITY):
            self.refusals.pop(key, None)
            return None
        if len(self.refusals) >= _MAX_TRACKED:
            self.refusals.clear()
        self.refusals[key] = refused + 1
        details = {"retryAfterSeconds": RETRY_AFTER_SECONDS}
        if not self.in_burst(now):
            err = StatusError(429, "Too many requests, please try again later.", "TooManyRequests", details)
        elif self.rng.random() < 0.5:
            err = StatusError(503, "the server is currently unable to handle the request", "ServiceUnavailable",
                              details)
        else:
            err = StatusError(500, "Internal error occurred: etcdserver: leader changed", "InternalError", details)
        err.retry_after = RETRY_AFTER_SECONDS
        return err

    def latency(self) -> float:
        return self.rng.uniform(*LATENCY_SECONDS) if self.slow else 0.0

    def watch_cut(self) -> float | None:
        """Seconds after which the server ends a new watch stream (None: no cut)."""
        return self.rng.uniform(*WATCH_CUT_SECONDS) if self.watch_cuts else None

    def watch_life(self) -> float | None:
        """Seconds after which a new watch stream ends with 410 Gone (None: it lives its timeout)."""
        return self.rng.uniform(*WATCH_LIFE_SECONDS) if self.watch_expiry else None

    def expired(self, since: int | None, rv_now: int, now: float | None = None) -> str | None:
        """The 410 message for a watch from ``since``, None when it may resume (or starts afresh)."""
        if self.compaction is None or since is None:
            return None
        return self.compaction.expired(since, rv_now, time.monotonic() if now is None else now)


MANNERS = web.AppKey("manners", ApiManners)
