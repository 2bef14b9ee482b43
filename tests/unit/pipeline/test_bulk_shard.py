"""The bulk shard runner against the simulated cluster served in-process (API server and controllers): pods
created as the tenant under a token bucket, 429 answers retried after Retry-After, one watch per shard resumed
after the server ends it and re-listed after 410 Gone, and a preempted pod decided with the per-pod path's
classification and submitted again."""

from __future__ import annotations

import asyncio
from collections import deque
from datetime import datetime, timezone

import yaml

from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.common.outcomes import WorkloadOutcome
from gpupoc.pipeline.async_kube import AsyncKubeClient
from gpupoc.pipeline.attempts import Evidence, NextAttempt, classify_attempt, next_attempt
from gpupoc.pipeline.bulk_rate import TokenBucket
from gpupoc.pipeline.bulk_shard import Hooks, Shard, ShardPod, ShardRunner
from gpupoc.podspec import labels as L
from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.config import DEFAULT_CONFIG, ClusterConfig
from gpupoc.sim.server import make_state, start_server

NS = "team-vision"


def body(item: str, seconds: float = 1.0) -> dict:
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": item, "labels": {L.RUN_ID: "r1"}, "annotations": {L.ITEM: item}},
            "spec": {"schedulingGates": [{"name": PIPELINE_GATE}], "nodeSelector": {"gpupoc.io/pool": "training"},
                     "tolerations": [{"key": "nvidia.com/gpu", "operator": "Exists", "effect": "NoSchedule"}],
                     "priorityClassName": "gpupoc-normal", "restartPolicy": "Never",
                     "containers": [{"name": "base", "image": "gpupoc/virtual:1.0",
                                     "env": [{"name": "WORKLOAD_DURATION_SECONDS", "value": str(seconds)}],
                                     "resources": {"limits": {"nvidia.com/gpu": "1"}}}]}}


class Cluster:
    """The simulated cluster in this event loop, and the tenant's async client."""

    def __init__(self, tmp_path, behaviours=()):
        config = ClusterConfig.model_validate(yaml.safe_load(DEFAULT_CONFIG.read_text()))
        self.state = make_state(config, tmp_path, behaviours=frozenset(Behaviour(b) for b in behaviours))

    async def __aenter__(self):
        from kubernetes_asyncio import client

        self.server = await start_server(self.state, port=0)
        token = next(t for t, i in self.state.identities.items() if i.context == "team-vision")
        cfg = client.Configuration(host=self.server.http_url)
        cfg.api_key, cfg.api_key_prefix = {"BearerToken": token}, {"BearerToken": "Bearer"}
        self.kube = AsyncKubeClient("team-vision", client.ApiClient(cfg))
        return self

    async def __aexit__(self, *exc):
        await self.kube.close()
        await self.server.stop()

    def release(self) -> None:
        for p in self.state.store.list("pods", NS):
            p["spec"]["schedulingGates"] = [g for g in p["spec"].get("schedulingGates") or []
                                            if g["name"] != PIPELINE_GATE]
            self.state.store.update("pods", p)
        self.state.kick()

    def events(self) -> list[dict]:
        return [{**e, "metadata": {**e["metadata"], "namespace": NS}} for e in self.state.store.list("events", NS)]


class Recorder:
    """The caller's records: submissions and the decisions, with the per-pod path's classification."""

    def __init__(self, cluster: Cluster, limit: int = 2):
        self.cluster, self.limit = cluster, limit
        self.submitted: list[tuple] = []
        self.decided: list[tuple[str, WorkloadOutcome, NextAttempt]] = []
        self.last_seen: dict[str, dict] = {}
        self.created: list[dict] = []  # per call of the "all created" hook: the pods it said were created

    def hooks(self, released: bool = True) -> Hooks:
        return Hooks(submitted=lambda item, pod, t, refusal: self.submitted.append((item, pod, t, refusal)),
                     decide=self.decide, released=lambda: released,
                     created=self.created.append)

    def decide(self, item, namespace, pod, try_number):
        now = self.cluster.state.store.get("pods", namespace, pod) if self._exists(namespace, pod) else None
        out = classify_attempt((namespace, pod), now or self.last_seen.get(pod), now is not None,
                               Evidence(self.cluster.events()))
        if not out.outcome.final:
            return None
        nxt = next_attempt(out.outcome, try_number, self.limit, False)
        self.decided.append((pod, out.outcome, nxt))
        return nxt

    def _exists(self, ns, name) -> bool:
        return any(p["metadata"]["name"] == name for p in self.cluster.state.store.list("pods", ns))


def run(coro):
    return asyncio.run(asyncio.wait_for(coro, 120))


def test_a_throttled_server_gets_every_pod_created_after_retry_after_and_one_watch_sees_them_ready(tmp_path):
    async def body_():
        async with Cluster(tmp_path, ["throttled"]) as c:
            rec = Recorder(c)
            shard = Shard(0, NS, "team-vision", tuple(ShardPod(f"w{i}", body(f"w{i}")) for i in range(12)))
            runner = ShardRunner(c.kube, shard, TokenBucket(qps=50, burst=5), rec.hooks())
            task = asyncio.ensure_future(runner.run(timeout_s=90))
            while not rec.created and not task.done():  # the shard says when it sent all its creations
                await asyncio.sleep(0.1)
            stored = {p["metadata"]["name"]: p["metadata"]["creationTimestamp"] for p in c.state.store.list("pods", NS)}
            c.release()
            return await task, rec, stored

    result, rec, stored = run(body_())
    assert {s[0] for s in rec.submitted if s[1]} == {f"w{i}" for i in range(12)}, rec.submitted
    assert len(rec.created) == 1, "the shard said 'all created' once"
    said = rec.created[0]
    assert {k: p.pod for k, p in said.items()} == {s[0]: s[1] for s in rec.submitted if s[1]}, \
        "every creation answered before 'all created', each item with its pod"
    assert {p.pod: p.created_at for p in said.values()} == stored, "the creation times the API server gave"
    assert result.throttling.refused >= 1, "the throttled server refused nothing: 429 handling untested"
    assert all(s.done for s in result.items.values()), result.summary()
    assert result.watches >= 1 and len(result.transitions) == 12
    ready = [t for t in result.transitions.values() if "Ready" in t.first_true]
    assert len(ready) == 12, "a watched pod's Ready=True transition was lost"
    assert all(t.first_true["PodScheduled"] <= t.first_true["Ready"] for t in ready)


def test_a_watch_resumed_after_a_cut_and_re_listed_after_410_gone_still_sees_every_pod_end(tmp_path):
    async def body_():
        async with Cluster(tmp_path, ["watch-cuts"]) as c:
            c.state.store._history = deque(c.state.store._history, maxlen=3)  # a tiny compaction window
            rec = Recorder(c)
            shard = Shard(1, NS, "team-vision", tuple(ShardPod(f"g{i}", body(f"g{i}", 4)) for i in range(4)))
            runner = ShardRunner(c.kube, shard, TokenBucket(qps=100, burst=10), rec.hooks())
            task = asyncio.ensure_future(runner.run(timeout_s=90))
            while len(rec.submitted) < 4:
                await asyncio.sleep(0.1)
            c.release()
            # churn elsewhere while the watch is cut (its resourceVersion is compacted away), up to 10 s: until
            # the runner has met its 410 Gone
            for i in range(40):
                if runner.result.gone:
                    break
                c.state.store.create("configmaps", {"metadata": {"name": f"churn-{i}", "namespace": "team-nlp"}})
                await asyncio.sleep(0.25)
            return await task

    result = run(body_())
    assert result.watches >= 2, "the server's cut did not make the runner watch again"
    assert result.gone >= 1 and result.relists >= 2, result.summary()
    assert all(s.done for s in result.items.values()), result.summary()
    assert all("Ready" in t.first_true for t in result.transitions.values())


def test_a_preempted_pod_is_decided_as_the_per_pod_path_decides_and_submitted_again(tmp_path):
    from gpupoc.sim.controllers import disruption
    from gpupoc.sim.controllers import wording as W

    gates: list[str] = []

    async def body_():
        async with Cluster(tmp_path) as c:
            rec = Recorder(c)
            shard = Shard(2, NS, "team-vision", (ShardPod("victim", body("victim", 30)),))
            # the release's record is not written yet: the attempt ran, so its successor is still ungated
            runner = ShardRunner(c.kube, shard, TokenBucket(qps=100, burst=10), rec.hooks(released=False),
                                 requeue_grace_s=0.5)
            task = asyncio.ensure_future(runner.run(timeout_s=90))
            while not rec.submitted:
                await asyncio.sleep(0.1)
            c.release()
            first = rec.submitted[0][1]
            while (c.state.store.get("pods", NS, first).get("status") or {}).get("phase") != "Running":
                await asyncio.sleep(0.1)
            victim = c.state.store.get("pods", NS, first)
            rec.last_seen[first] = victim
            preemptor = {"metadata": {"uid": "uid-high", "name": "high", "namespace": NS}, "spec": {}}
            disruption.preempt(c.state, victim, preemptor, victim["spec"]["nodeName"], W.wording_for(frozenset()))
            while len(rec.submitted) < 2 and not task.done():
                await asyncio.sleep(0.1)
            second = rec.submitted[-1][1]
            pod = c.state.store.get("pods", NS, second)
            gates.extend(g["name"] for g in pod["spec"].get("schedulingGates") or [])
            pod["status"]["phase"] = "Succeeded"  # as the kubelet ends it, without waiting its 30 s
            c.state.store.update("pods", pod)
            return await task, rec

    result, rec = run(body_())
    assert rec.decided and rec.decided[0][1] is WorkloadOutcome.PREEMPTED, rec.decided
    assert rec.decided[0][2] is NextAttempt.RESUBMIT
    assert [s[2] for s in rec.submitted] == [1, 2], "the preempted item was not submitted again as try 2"
    assert rec.submitted[1][1] != rec.submitted[0][1], "the resubmission reused the preempted pod's name"
    assert PIPELINE_GATE not in gates, "a resubmission after the release was gated again (never released)"
    assert result.items["victim"].done and result.items["victim"].try_number == 2


class Refusing:
    """The tenant's client, but its first watches are refused for now: 429 (with the seconds to wait), then a
    500 as an API server answers when etcd's leader changed."""

    def __init__(self, kube, refusals):
        self.kube, self.refusals = kube, list(refusals)

    def __getattr__(self, name):
        return getattr(self.kube, name)

    async def stream(self, path, query):
        if self.refusals:
            yield {"type": "ERROR", "object": self.refusals.pop(0)}
            return
        async for event in self.kube.stream(path, query):
            yield event


def test_a_watch_refused_for_now_is_asked_again_and_still_sees_every_pod_end(tmp_path):
    refusals = [{"kind": "Status", "code": 429, "message": "Too many requests, please try again later.",
                 "details": {"retryAfterSeconds": 1}},
                {"kind": "Status", "code": 500, "message": "etcdserver: leader changed"}]

    async def body_():
        async with Cluster(tmp_path) as c:
            rec = Recorder(c)
            shard = Shard(3, NS, "team-vision", tuple(ShardPod(f"r{i}", body(f"r{i}")) for i in range(3)))
            runner = ShardRunner(Refusing(c.kube, refusals), shard, TokenBucket(qps=100, burst=10), rec.hooks())
            task = asyncio.ensure_future(runner.run(timeout_s=60))
            while len([s for s in rec.submitted if s[1]]) < 3 and not task.done():
                await asyncio.sleep(0.1)
            c.release()
            return await task

    result = run(body_())
    assert all(s.done for s in result.items.values()), result.summary()
    assert result.watches >= 3, result.summary()
    assert sum("refused for now" in e for e in result.errors) == 2, result.errors


class LosingAnswers:
    """The tenant's client, but the answers of the first creations are lost: some after the server created the
    pod (the answer came too late), some before the request was sent (the connection broke)."""

    def __init__(self, kube: AsyncKubeClient, after: int, before: int):
        self.kube, self.after, self.before = kube, after, before

    async def request(self, method, path, query=None, body=None, accept=None):
        from gpupoc.exceptions import SourceUnavailable

        if method == "POST" and self.before:
            self.before -= 1
            raise SourceUnavailable("test API server (context team-vision)", "API server unreachable: OSError")
        answer = await self.kube.request(method, path, query, body, accept=accept)
        if method == "POST" and self.after:
            self.after -= 1
            raise SourceUnavailable("test API server (context team-vision)", "API server unreachable: TimeoutError")
        return answer

    def stream(self, path, query):
        return self.kube.stream(path, query)


def test_creations_whose_answers_are_lost_are_sent_again_and_each_item_gets_exactly_one_pod(tmp_path):
    async def body_():
        async with Cluster(tmp_path) as c:
            rec = Recorder(c)
            shard = Shard(3, NS, "team-vision", tuple(ShardPod(f"l{i}", body(f"l{i}")) for i in range(6)))
            kube = LosingAnswers(c.kube, after=2, before=2)
            runner = ShardRunner(kube, shard, TokenBucket(qps=100, burst=10), rec.hooks())
            task = asyncio.ensure_future(runner.run(timeout_s=90))
            while len([s for s in rec.submitted if s[1]]) < 6 and not task.done():
                await asyncio.sleep(0.1)
            c.release()
            return await task, rec, c.state.store.list("pods", NS)

    result, rec, pods = run(body_())
    assert sorted(s[0] for s in rec.submitted) == [f"l{i}" for i in range(6)], rec.submitted
    assert all(s[1] for s in rec.submitted), "a creation without an answer was recorded as refused"
    mine = [p for p in pods if p["metadata"]["labels"].get("gpupoc.io/bulk-shard") == "3"]
    assert sorted(p["metadata"]["annotations"][L.ITEM] for p in mine) == [f"l{i}" for i in range(6)], \
        "an item whose creation answer was lost got a second pod (or none)"
    assert result.throttling.unanswered == 4 and not result.errors, result.summary()
    assert all(s.done for s in result.items.values()), result.summary()


def test_a_request_waiting_for_a_connection_of_the_pool_is_not_timed_out_before_it_is_sent(tmp_path, monkeypatch):
    from kubernetes_asyncio import client

    from gpupoc.pipeline import async_kube

    monkeypatch.setattr(async_kube, "REQUEST_TIMEOUT_SECONDS", 1.0)

    async def body_():
        async with Cluster(tmp_path) as c:
            cfg = client.Configuration(host=c.server.http_url)
            cfg.api_key, cfg.api_key_prefix = c.kube.api.configuration.api_key, {"BearerToken": "Bearer"}
            cfg.connection_pool_maxsize = 1  # the watch holds the only connection until the server ends it
            kube = AsyncKubeClient("team-vision", client.ApiClient(cfg))
            opened = asyncio.Event()

            async def watch_pods():  # the pod as ADDED, then nothing (it stays gated) until the server ends it
                async for event in kube.stream(pods, [("watch", "true"), ("timeoutSeconds", "3")]):
                    assert event["type"] == "ADDED", event
                    opened.set()

            pods = f"/api/v1/namespaces/{NS}/pods"
            try:
                assert (await kube.request("POST", pods, body=body("p0"))).ok
                watching = asyncio.ensure_future(watch_pods())
                await opened.wait()
                answer = await kube.request("GET", pods)
                await watching
                return answer
            finally:
                await kube.close()

    answer = run(body_())
    assert answer.ok, answer


def test_an_earlier_runs_shard_of_the_same_number_is_not_taken_for_this_runs_pods(tmp_path):
    def pod(item: str, run_id: str) -> ShardPod:
        b = body(item)
        b["metadata"]["labels"][L.RUN_ID] = run_id
        return ShardPod(item, b)

    async def body_():
        async with Cluster(tmp_path) as c:
            results = []
            for run_id in ("r0", "r1"):  # the same class run twice: shard 0, the same items, the same namespace
                rec = Recorder(c)
                shard = Shard(0, NS, "team-vision", tuple(pod(f"s{i}", run_id) for i in range(3)))
                task = asyncio.ensure_future(ShardRunner(c.kube, shard, TokenBucket(100, 10), rec.hooks()).run(90))
                while len([s for s in rec.submitted if s[1]]) < 3 and not task.done():
                    await asyncio.sleep(0.1)
                c.release()
                results.append((await task, rec))
            return results

    (_, first), (second, rec) = run(body_())
    earlier = {s[1] for s in first.submitted}
    assert not earlier & set(second.transitions), "the second run followed the first run's pods"
    assert {s.pod for s in second.items.values()} == {s[1] for s in rec.submitted}
    assert all("Ready" in t.first_true for t in second.transitions.values()), "this run's pods were not followed"


def test_a_re_list_marks_the_pods_still_waiting_a_word_said_meanwhile_may_be_unseen():
    from gpupoc.pipeline.bulk_rate import Answer
    from gpupoc.pipeline.pod_transitions import PodTransitions

    class Listing:
        async def request(self, method, path, query=None, body=None, accept=None):
            return Answer(200, {"metadata": {"resourceVersion": "7"}, "items": []})

    shard = Shard(0, NS, "team-vision", (ShardPod("a", body("a")), ShardPod("b", body("b"))))
    runner = ShardRunner(Listing(), shard, TokenBucket(qps=100, burst=10),
                         Hooks(submitted=lambda *a: None, decide=lambda *a: None))
    placed = PodTransitions(NS, "a-1", "a")
    placed.first_true["PodScheduled"] = datetime(2026, 12, 1, tzinfo=timezone.utc)
    runner.result.transitions = {"a-1": placed, "b-1": PodTransitions(NS, "b-1", "b")}
    assert run(runner._relist()) == "7"
    assert not runner.result.transitions["a-1"].relisted_waiting and runner.result.transitions["b-1"].relisted_waiting


def test_under_watch_expiry_a_watch_ended_with_410_is_re_listed_and_still_sees_every_pod_end(tmp_path):
    from gpupoc.sim.api.manners import MANNERS

    async def body_():
        async with Cluster(tmp_path, ["watch-expiry"]) as c:
            manners = c.server.runner.app[MANNERS]
            manners.watch_life = lambda: 0.5  # every watch ends with 410 after half a second, not 15-45 s
            rec = Recorder(c)
            shard = Shard(2, NS, "team-vision", tuple(ShardPod(f"e{i}", body(f"e{i}", 2)) for i in range(4)))
            runner = ShardRunner(c.kube, shard, TokenBucket(qps=100, burst=10), rec.hooks())
            task = asyncio.ensure_future(runner.run(timeout_s=90))
            while len(rec.submitted) < 4:
                await asyncio.sleep(0.1)
            c.release()
            return await task

    result = run(body_())
    assert result.gone >= 1 and result.relists >= 2, f"no 410 made the runner list again: {result.summary()}"
    assert all(s.done for s in result.items.values()), result.summary()
    assert all("Ready" in t.first_true for t in result.transitions.values())


def test_a_watch_that_keeps_breaking_backs_off_and_ends_naming_the_watch_and_the_fix():
    from gpupoc.pipeline.bulk_rate import Answer
    from gpupoc.pipeline.bulk_shard import WATCH_POLICY

    class Broken:
        async def request(self, method, path, query=None, body=None, accept=None):
            return Answer(200, {"metadata": {"resourceVersion": "7"}, "items": []})

        async def stream(self, path, query):
            raise ConnectionResetError("reset by peer")
            yield  # noqa: unreachable - an async generator

    slept: list[float] = []

    async def fake_sleep(s):
        slept.append(s)

    shard = Shard(5, NS, "team-vision", (ShardPod("b0", body("b0")),))
    runner = ShardRunner(Broken(), shard, TokenBucket(qps=100, burst=10), Hooks(lambda *a: None, lambda *a: None),
                         sleep=fake_sleep)
    try:
        run(runner.watch())
    except RuntimeError as exc:
        message = str(exc)
    else:
        raise AssertionError("a watch broken for good must end")
    assert f"watch /api/v1/namespaces/{NS}/pods?labelSelector=gpupoc.io/bulk-shard=5" in message
    assert "no answer" in message and "fix:" in message
    assert 1 <= len(slept) < WATCH_POLICY.attempts and slept[0] < slept[1], slept
    assert runner.result.relists == 1, "a broken stream resumes from its resourceVersion: no new list"
