"""API behaviour profiles: throttling (429 and bursts of 5xx with Retry-After, never more than a bounded number
of refusals in a row), added latency and watch streams cut by the server, served by the real aiohttp app."""

from __future__ import annotations

import asyncio

from aiohttp.test_utils import TestClient, TestServer

from gpupoc.sim.api.app import build_app
from gpupoc.sim.api.manners import (
    BURST_EVERY, LATENCY_SECONDS, MAX_REFUSALS_IN_A_ROW, WATCH_CUT_SECONDS, ApiManners,
)
from gpupoc.sim.cluster import make_identities

from .behaviour_helpers import make_state

PODS = "/api/v1/namespaces/team-vision/pods"


def test_refusals_in_a_row_are_bounded_for_the_same_request_even_in_a_burst():
    m = ApiManners(throttled=True, seed=1)
    in_burst = m.started + BURST_EVERY + 0.1
    for i in range(100):
        refused = 0
        while m.refusal("u", "GET", f"{PODS}/{i}", now=in_burst) is not None:
            refused += 1
            assert refused <= MAX_REFUSALS_IN_A_ROW, "refused more times in a row than bounded"
        assert refused == MAX_REFUSALS_IN_A_ROW, "a burst lets requests through before the bound"
    assert any(m.refusal("u", "GET", f"{PODS}/x{i}", now=m.started + 1) for i in range(200)), "never throttled"
    assert not all(m.refusal("u", "GET", f"{PODS}/y{i}", now=m.started + 1) for i in range(200)), "always throttled"


def test_a_refusal_is_a_kubernetes_status_with_retry_after():
    m = ApiManners(throttled=True, seed=3)
    throttled = next(e for e in (m.refusal("u", "GET", f"/x/{i}", now=m.started + 1) for i in range(500)) if e)
    assert throttled.code == 429 and throttled.retry_after == 1
    assert throttled.status["reason"] == "TooManyRequests"
    assert throttled.status["message"] == "Too many requests, please try again later."
    assert throttled.status["details"] == {"retryAfterSeconds": 1}
    burst = m.refusal("u", "POST", "/y", now=m.started + BURST_EVERY + 0.2)
    assert burst is not None and burst.code in (500, 503) and burst.retry_after == 1


def test_without_profiles_nothing_is_refused_delayed_or_cut():
    m = ApiManners()
    assert all(m.refusal("u", "GET", f"/x/{i}") is None for i in range(100))
    assert m.latency() == 0.0 and m.watch_cut() is None
    slow = ApiManners(slow=True, watch_cuts=True)
    assert all(LATENCY_SECONDS[0] <= slow.latency() <= LATENCY_SECONDS[1] for _ in range(50))
    assert WATCH_CUT_SECONDS[0] <= slow.watch_cut() <= WATCH_CUT_SECONDS[1]


def _serve(state, body):
    async def run():
        async with TestClient(TestServer(build_app(state))) as client:
            return await body(client)
    return asyncio.run(run())


def _token(state) -> dict:
    token = next(t for t, ident in state.identities.items() if ident.context == "admin")
    return {"Authorization": f"Bearer {token}"}


def test_the_throttled_server_answers_429_with_retry_after_and_a_retried_request_gets_through(tmp_path):
    state = make_state(tmp_path, behaviours=["throttled"], seed=5)
    state.identities = make_identities(state.config)

    async def body(client):
        seen = []
        for i in range(60):
            path = f"{PODS}?limit={i}"
            for _ in range(MAX_REFUSALS_IN_A_ROW + 1):
                r = await client.get(path, headers=_token(state))
                seen.append((r.status, r.headers.get("Retry-After"), (await r.json()).get("reason")))
                if r.status == 200:
                    break
            assert r.status == 200, f"{path} still refused after {MAX_REFUSALS_IN_A_ROW + 1} tries"
        return seen

    seen = _serve(state, body)
    assert (429, "1", "TooManyRequests") in seen


def test_watch_cuts_end_a_watch_stream_within_seconds(tmp_path):
    state = make_state(tmp_path, behaviours=["watch-cuts"], seed=4)  # its first cut comes after 2.05 s
    state.identities = make_identities(state.config)

    async def body(client):
        r = await client.get(f"{PODS}?watch=true&timeoutSeconds=600", headers=_token(state))
        try:
            await asyncio.wait_for(r.read(), 30)  # returns only when the server ends the stream
        except asyncio.TimeoutError:
            raise AssertionError("the server did not end a watch asked for 600 s") from None
        return r.status

    assert _serve(state, body) == 200


def test_compaction_keeps_one_to_two_intervals_of_history_and_words_a_too_old_watch_as_the_watch_cache():
    from gpupoc.sim.api.compaction import Compaction

    c = Compaction(started=0.0, every=20.0)
    assert c.expired(1, rv_now=50, now=5.0) is None, "nothing is compacted before the first interval"
    c.advance(20.0, 60)   # first compaction: notes 60, compacts nothing yet
    assert c.expired(1, rv_now=70, now=21.0) is None
    c.advance(40.0, 90)   # second: compacts to 60, notes 90
    assert c.expired(59, rv_now=95, now=41.0) == "too old resource version: 59 (60)"
    assert c.expired(60, rv_now=95, now=41.0) is None, "a watch from the compacted resourceVersion resumes"
    assert c.expired(80, rv_now=120, now=65.0) == "too old resource version: 80 (90)", "compacted at 60 s to 90"


def test_watch_expiry_draws_a_seeded_life_for_every_watch_and_nothing_without_it():
    from gpupoc.sim.api.compaction import WATCH_LIFE_SECONDS

    a, b = ApiManners(watch_expiry=True, seed=4), ApiManners(watch_expiry=True, seed=4)
    lives = [a.watch_life() for _ in range(20)]
    assert lives == [b.watch_life() for _ in range(20)], "the same seed draws the same lives"
    assert all(WATCH_LIFE_SECONDS[0] <= x <= WATCH_LIFE_SECONDS[1] for x in lives)
    plain = ApiManners()
    assert plain.watch_life() is None and plain.expired(1, 10_000, now=plain.started + 3600) is None


async def _events(resp) -> list[dict]:
    import json

    text = (await asyncio.wait_for(resp.read(), 30)).decode()
    return [json.loads(line) for line in text.splitlines() if line.strip()]


def test_watch_expiry_answers_a_watch_from_a_compacted_resource_version_with_410_expired(tmp_path):
    from gpupoc.sim.api.manners import MANNERS

    state = make_state(tmp_path, behaviours=["watch-expiry"], seed=2)
    state.identities = make_identities(state.config)
    app = build_app(state)
    compaction = app[MANNERS].compaction
    old = state.store.rv
    compaction.advance(compaction.next_at, old + 5)        # notes a later resourceVersion ...
    compaction.advance(compaction.next_at, old + 10)       # ... and compacts to it

    async def run():
        async with TestClient(TestServer(app)) as client:
            r = await client.get(f"{PODS}?watch=true&resourceVersion={old}", headers=_token(state))
            return r.status, await _events(r)

    status, events = asyncio.run(run())
    assert status == 200 and len(events) == 1 and events[0]["type"] == "ERROR", events
    obj = events[0]["object"]
    assert (obj["code"], obj["reason"], obj["kind"]) == (410, "Expired", "Status")
    assert obj["message"] == f"too old resource version: {old} ({old + 5})"


def test_watch_expiry_ends_an_open_watch_with_410_after_its_life(tmp_path):
    from gpupoc.sim.api.compaction import EXPIRED_WATCH
    from gpupoc.sim.api.manners import MANNERS

    state = make_state(tmp_path, behaviours=["watch-expiry"], seed=2)
    state.identities = make_identities(state.config)
    app = build_app(state)
    app[MANNERS].watch_life = lambda: 0.3  # a life of 0.3 s instead of a drawn 15-45 s

    async def run():
        async with TestClient(TestServer(app)) as client:
            r = await client.get(f"{PODS}?watch=true&allowWatchBookmarks=true&timeoutSeconds=600",
                                 headers=_token(state))
            return await _events(r)

    events = asyncio.run(run())
    assert events and events[-1]["type"] == "ERROR", events
    assert events[-1]["object"]["code"] == 410 and events[-1]["object"]["message"] == EXPIRED_WATCH
    assert all(e["type"] != "ERROR" for e in events[:-1])


def test_a_watch_asked_for_less_than_its_life_ends_at_its_timeout_without_an_error(tmp_path):
    from gpupoc.sim.api.manners import MANNERS

    state = make_state(tmp_path, behaviours=["watch-expiry"], seed=2)
    state.identities = make_identities(state.config)
    app = build_app(state)
    app[MANNERS].watch_life = lambda: 30.0

    async def run():
        async with TestClient(TestServer(app)) as client:
            r = await client.get(f"{PODS}?watch=true&timeoutSeconds=1", headers=_token(state))
            return await _events(r)

    assert all(e["type"] != "ERROR" for e in asyncio.run(run()))


def test_a_watch_with_bookmarks_gets_one_before_its_timeout_as_from_kube_apiserver(tmp_path):
    state = make_state(tmp_path)
    state.identities = make_identities(state.config)

    async def run(query: str):
        async with TestClient(TestServer(build_app(state))) as client:
            r = await client.get(f"{PODS}?watch=true&resourceVersion={state.store.rv}&{query}",
                                 headers=_token(state))
            return await _events(r)

    async def side_by_side():  # three watches at once: their timeouts run together
        return await asyncio.gather(run("allowWatchBookmarks=true&timeoutSeconds=3"), run("timeoutSeconds=3"),
                                    run("allowWatchBookmarks=true&timeoutSeconds=2"))

    with_bookmarks, without, too_close = asyncio.run(side_by_side())
    assert [e["type"] for e in with_bookmarks] == ["BOOKMARK"], with_bookmarks
    assert with_bookmarks[0]["object"]["metadata"]["resourceVersion"] == str(state.store.rv)
    assert without == [], "no bookmark unless asked for"
    assert too_close == [], "none when the timeout is that close"
