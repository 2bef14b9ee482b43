"""The wave's triggers share one pod list per namespace and poll interval (gpupoc.dags.pod_cache)."""

from __future__ import annotations

import asyncio
import time
from types import SimpleNamespace

import pytest
from kubernetes_asyncio.client.exceptions import ApiException

from gpupoc.dags import pod_cache


class FakeConn:
    async def __aenter__(self):
        return self

    async def __aexit__(self, *exc):
        return False


class Lister:
    def __init__(self, names):
        self.names, self.calls = list(names), 0

    async def list_namespaced_pod(self, namespace, label_selector=""):
        self.calls += 1
        return SimpleNamespace(items=[SimpleNamespace(metadata=SimpleNamespace(name=n)) for n in self.names])


@pytest.fixture
def lister(monkeypatch):
    pod_cache.PodLists.listings.clear()
    lst = Lister(["a", "b", "c"])
    monkeypatch.setattr(pod_cache.async_client, "CoreV1Api", lambda conn: lst)
    monkeypatch.setattr(pod_cache.SharedPodHook, "get_conn", lambda self: FakeConn())
    return lst


def hook(max_age=5.0, started=None):
    return pod_cache.SharedPodHook(config_dict={"k": 1}, cluster_context="team-a", label_selector="run=r1",
                                   max_age=max_age, started=time.time() if started is None else started)


def test_many_triggers_of_a_namespace_cost_one_list_per_poll_interval(lister):
    async def main():
        hooks = [hook(max_age=3600, started=time.time() - 1) for _ in range(50)]  # all within one poll interval
        pods = await asyncio.gather(*(h.get_pod(n, "team-a") for h, n in zip(hooks, ["a", "b", "c"] * 17)))
        again = await asyncio.gather(*(h.get_pod("a", "team-a") for h in hooks))
        return pods, again

    pods, again = asyncio.run(main())
    assert [p.metadata.name for p in pods[:3]] == ["a", "b", "c"] and len(again) == 50
    assert lister.calls == 1, "one list answered 100 reads within the poll interval"


def test_a_trigger_started_after_the_newest_list_is_never_answered_by_it(lister):
    async def main():
        await hook().get_pod("a", "team-a")
        lister.names.append("new")
        return await hook(started=time.time() + 0.001).get_pod("new", "team-a")

    assert asyncio.run(main()).metadata.name == "new" and lister.calls == 2


def test_a_pod_missing_from_a_fresh_list_answers_404(lister):
    with pytest.raises(ApiException) as exc:
        asyncio.run(hook().get_pod("gone", "team-a"))
    assert exc.value.status == 404


def test_a_list_older_than_the_poll_interval_is_taken_again(lister):
    async def main():
        h = hook(max_age=0.0)
        await h.get_pod("a", "team-a")
        await h.get_pod("a", "team-a")

    asyncio.run(main())
    assert lister.calls == 2


def test_the_triggers_of_one_identity_share_one_client(monkeypatch):
    pod_cache.SharedPodHook.clients.clear()

    async def load(self):
        self.client_configuration = pod_cache.async_client.Configuration()

    monkeypatch.setattr(pod_cache.SharedPodHook, "_load_config", load)

    async def main():
        conns = []
        for h in (hook(), hook()):
            async with h.get_conn() as conn:
                conns.append(conn)
        other = pod_cache.SharedPodHook(config_dict={"k": 2}, cluster_context="team-b", label_selector="run=r1",
                                        max_age=5.0, started=0.0)
        async with other.get_conn() as conn:
            conns.append(conn)
        for c in {id(c): c for c in conns}.values():
            await c.close()
        return conns

    a, b, c = asyncio.run(main())
    assert a is b and a is not c


class Refusing(Lister):
    """Refuses its first lists as a throttled API server does, then lists."""

    def __init__(self, names, refusals):
        super().__init__(names)
        self.refusals = list(refusals)

    async def list_namespaced_pod(self, namespace, label_selector=""):
        if self.refusals:
            self.calls += 1
            status, headers = self.refusals.pop(0)
            raise ApiException(status=status, reason="Too Many Requests") if not headers else \
                _with_headers(status, headers)
        return await super().list_namespaced_pod(namespace, label_selector)


def _with_headers(status, headers):
    exc = ApiException(status=status, reason="refused")
    exc.headers = headers
    return exc


def test_a_throttled_or_unavailable_list_is_taken_again_after_retry_after_and_the_trigger_gets_its_pod(
        monkeypatch):
    pod_cache.PodLists.listings.clear()
    lst = Refusing(["a"], [(429, {"Retry-After": "3"}), (503, {}), (500, {"Retry-After": "1"})])
    slept: list[float] = []

    async def fake_sleep(s):
        slept.append(s)

    monkeypatch.setattr(pod_cache.async_client, "CoreV1Api", lambda conn: lst)
    monkeypatch.setattr(pod_cache.SharedPodHook, "get_conn", lambda self: FakeConn())
    monkeypatch.setattr(pod_cache.PodLists, "sleep", staticmethod(fake_sleep))
    assert asyncio.run(hook().get_pod("a", "team-a")).metadata.name == "a"
    assert lst.calls == 4 and slept[0] == 3.0 and slept[2] == 1.0 and 0 < slept[1] <= 1.0, slept


def test_a_list_refused_for_good_is_not_asked_again_and_one_refused_too_long_names_the_list_and_the_fix(
        monkeypatch):
    from gpupoc.common.api_retry import ApiGaveUp

    pod_cache.PodLists.listings.clear()
    slept: list[float] = []

    async def fake_sleep(s):
        slept.append(s)

    monkeypatch.setattr(pod_cache.SharedPodHook, "get_conn", lambda self: FakeConn())
    monkeypatch.setattr(pod_cache.PodLists, "sleep", staticmethod(fake_sleep))
    forbidden = Refusing(["a"], [(403, {})])
    monkeypatch.setattr(pod_cache.async_client, "CoreV1Api", lambda conn: forbidden)
    with pytest.raises(ApiException) as exc:
        asyncio.run(hook().get_pod("a", "team-a"))
    assert exc.value.status == 403 and forbidden.calls == 1 and not slept
    throttled = Refusing(["a"], [(429, {"Retry-After": "1"})] * 50)
    monkeypatch.setattr(pod_cache.async_client, "CoreV1Api", lambda conn: throttled)
    with pytest.raises(ApiGaveUp) as gave_up:
        asyncio.run(hook().get_pod("a", "team-a"))
    assert "namespaces/team-a/pods?labelSelector=run=r1" in str(gave_up.value) and "HTTP 429" in str(gave_up.value)
    assert "fix:" in str(gave_up.value) and throttled.calls == 10
