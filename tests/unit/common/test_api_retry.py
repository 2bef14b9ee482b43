"""The one retry policy of every API client (gpupoc.common.api_retry), on a fake clock."""

from __future__ import annotations

import asyncio
import random

import pytest

from gpupoc.common.api_retry import (
    ApiGaveUp, Backoff, RetryPolicy, acall_retrying, call_retrying, retry_after_seconds,
)
from gpupoc.exceptions import SourceUnavailable


class FakeClock:
    """Time that moves only when the code under test sleeps."""

    def __init__(self) -> None:
        self.now, self.slept = 100.0, []

    def __call__(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        self.now += seconds


class Refusal(Exception):
    """Stands for a client's ApiException: status, headers, reason."""

    def __init__(self, status: int, retry_after: str | None = None):
        super().__init__(f"HTTP {status}")
        self.status, self.reason = status, "refused"
        self.headers = {"Retry-After": retry_after} if retry_after is not None else {}


def backoff(policy: RetryPolicy = RetryPolicy(), clock: FakeClock | None = None) -> Backoff:
    return Backoff("GET https://api:6443/api/v1/pods (context team-a)", policy, clock or FakeClock(), random.Random(7))


def test_retry_after_is_honoured_and_cut_to_the_longest_wait():
    b = backoff(RetryPolicy(max_wait_s=10.0))
    assert b.next_wait(429, {"Retry-After": "3"}) == 3.0
    assert b.next_wait(503, {"Retry-After": "600"}) == 10.0


@pytest.mark.parametrize("status, headers, retried", [
    (429, {}, True), (503, {}, True), (500, {"Retry-After": "1"}, True), (500, {}, False), (502, {}, False),
    (404, {"Retry-After": "1"}, False), (403, {}, False), (409, {}, False), (200, {}, False), (0, None, True),
])
def test_only_refusals_for_now_are_sent_again(status, headers, retried):
    assert (backoff().next_wait(status, headers) is not None) is retried


def test_without_retry_after_the_back_off_grows_with_jitter_up_to_the_longest_wait():
    policy = RetryPolicy(base_s=0.5, max_wait_s=4.0, jitter=0.2, attempts=20, max_total_s=1000)
    b = backoff(policy)
    waits = [b.next_wait(503) for _ in range(7)]
    for n, w in enumerate(waits):
        full = min(4.0, 0.5 * 2 ** n)
        assert 0.8 * full <= w <= full, (n, w)
    assert waits[0] < waits[1] < waits[2] and max(waits) <= 4.0


def test_jitter_spreads_clients_refused_at_once():
    draws = {round(Backoff("x", RetryPolicy(), FakeClock(), random.Random(seed)).next_wait(429), 4)
             for seed in range(20)}
    assert len(draws) > 10, "twenty clients refused together must not all come back together"


def test_the_policy_gives_up_after_its_sends_with_an_error_naming_the_endpoint_the_answer_and_the_fix():
    b = backoff(RetryPolicy(attempts=3))
    assert b.next_wait(429, {"Retry-After": "1"}, "Too many requests") == 1.0
    assert b.next_wait(429, {"Retry-After": "1"}, "Too many requests") == 1.0
    assert b.next_wait(429, {"Retry-After": "1"}, "Too many requests") is None and b.spent
    err = b.error()
    assert isinstance(err, ApiGaveUp) and isinstance(err, SourceUnavailable) and err.status == 429
    assert "GET https://api:6443/api/v1/pods" in str(err) and "HTTP 429 (Too many requests)" in str(err)
    assert "3 send(s)" in err.reason and "flow schema" in err.fix


def test_the_policy_gives_up_before_its_total_wait_is_exceeded():
    clock = FakeClock()
    b = backoff(RetryPolicy(attempts=100, max_total_s=10.0), clock)
    while (wait := b.next_wait(503, {"Retry-After": "4"})) is not None:
        clock.sleep(wait)
    assert clock.slept == [4.0, 4.0] and b.spent, "a third wait of 4 s would pass the 10 s total"
    assert "unavailable" in b.error().fix and "readyz" in b.error().fix


def test_a_final_answer_is_not_spent_and_a_reset_starts_afresh():
    b = backoff(RetryPolicy(attempts=2))
    assert b.next_wait(403) is None and not b.spent
    b.next_wait(429)
    b.reset()
    assert b.next_wait(429, {"Retry-After": "1"}) == 1.0, "a success in between gives a new budget"


def test_no_answer_is_retried_and_its_give_up_says_so():
    b = backoff(RetryPolicy(attempts=2))
    assert b.next_wait(0, None, "ConnectionResetError") is not None
    assert b.next_wait(0, None, "ConnectionResetError") is None
    assert "no answer" in b.error().reason and "reachable" in b.error().fix


def test_a_watch_error_known_to_be_for_now_is_retried_without_retry_after():
    assert backoff().next_wait(500, {}, "etcdserver: leader changed", for_now=True) is not None


def test_retry_after_in_whole_seconds_only():
    assert retry_after_seconds({"Retry-After": "2"}) == 2.0
    assert retry_after_seconds({"Retry-After": "Wed, 21 Oct 2026 07:28:00 GMT"}) is None
    assert retry_after_seconds({"Retry-After": "-1"}) is None and retry_after_seconds(None) is None


def test_a_raising_client_is_called_again_while_refused_for_now():
    clock, answers = FakeClock(), [Refusal(429, "2"), Refusal(503), "listed"]

    def fn():
        a = answers.pop(0)
        if isinstance(a, Exception):
            raise a
        return a

    assert call_retrying(fn, "LIST pods", sleep=clock.sleep, clock=clock) == "listed"
    assert clock.slept[0] == 2.0 and len(clock.slept) == 2


def test_a_raising_client_keeps_its_final_error_and_other_exceptions():
    with pytest.raises(Refusal):
        call_retrying(lambda: (_ for _ in ()).throw(Refusal(404)), "GET pod", sleep=lambda s: None)
    with pytest.raises(KeyError):
        call_retrying(lambda: {}["x"], "GET pod", sleep=lambda s: None)


def test_an_async_client_gives_up_with_the_clear_error():
    clock = FakeClock()

    async def fn():
        raise Refusal(429, "1")

    async def sleep(s):
        clock.sleep(s)

    with pytest.raises(ApiGaveUp) as err:
        asyncio.run(acall_retrying(fn, "LIST events", policy=RetryPolicy(attempts=4), sleep=sleep, clock=clock))
    assert clock.slept == [1.0, 1.0, 1.0] and "LIST events" in str(err.value)


def test_a_policy_that_cannot_work_is_refused():
    with pytest.raises(ValueError, match="attempts >= 1"):
        RetryPolicy(attempts=0)


def test_a_503_through_the_api_servers_proxy_is_the_backends_answer_not_a_refusal():
    from gpupoc.common.api_retry import DEFAULT_POLICY, PROXY_POLICY, policy_for

    proxied = policy_for("/api/v1/namespaces/a/services/web/proxy/healthz")
    assert proxied is PROXY_POLICY and policy_for("/api/v1/namespaces/a/pods?x=proxy") is DEFAULT_POLICY
    b = Backoff("GET proxy", proxied, FakeClock(), random.Random(1))
    assert b.next_wait(503, {}, "no endpoints available for service \"web\"") is None and not b.spent
    assert b.next_wait(503, {"Retry-After": "1"}) == 1.0, "a Retry-After is still honoured"
