"""One shard of a bulk wave: its pods created as their tenant at a bounded rate, watched with one watch.

A shard is up to ``shard_size`` wave items of one tenant (one namespace, one identity). Its runner creates the
items' pods through the async Kubernetes client under a token bucket (``bulk_rate``), records each submission
as the per-pod operator does, and follows them with ONE watch on the shard's label (``SHARD_LABEL``, with the
run's label: an earlier run's shard of the same number is not this one), resumed
from the last resourceVersion when the server ends it and re-listed when the server answers 410 Gone (as
client-go's reflector does). Every update goes into the pod's condition transitions (``pod_transitions``).

What ends an attempt and what follows is not decided here: ``decide(item, namespace, pod, try)`` is the per-pod
path's own decision (``steps.attempt_decision.decide``: ``attempts.classify_attempt`` and ``next_attempt`` on
the records the evidence reads). ``resubmit`` submits the item again (ungated once the wave was released),
``platform`` follows the platform's own new pod of the item, ``none`` ends the item. A failed pod's log tail is
read as its tenant and handed to ``on_log`` (the task log), as ``KubernetesPodOperator`` does.
"""

from __future__ import annotations

import asyncio
import json
import logging
import secrets
import time
from dataclasses import dataclass, field
from typing import Any, AsyncIterator, Awaitable, Callable, Protocol

from gpupoc.common.api_retry import Backoff, RetryPolicy
from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.pipeline.attempts import NextAttempt
from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline.bulk_rate import Answer, Throttling, TokenBucket, send
from gpupoc.pipeline.k8s import METADATA_ONLY
from gpupoc.pipeline.pod_transitions import PodTransitions
from gpupoc.pipeline.wave import item_key
from gpupoc.podspec.labels import RUN_ID

SHARD_LABEL = "gpupoc.io/bulk-shard"
WATCH_SECONDS = 300          # a watch asks for this long; the server may end it sooner
REQUEUE_GRACE_SECONDS = 2.0  # a resubmission first waits this long for the platform's own new pod
LOG_TAIL_LINES = 20
# a watch refused for now (or broken) is asked again as this policy says; once it runs out the watch ends,
# naming the endpoint and the fix (the observer still decides every item)
WATCH_POLICY = RetryPolicy(attempts=30, max_total_s=300.0)
log = logging.getLogger(__name__)
REFUSED_FOR_GOOD = (400, 403, 409, 422)  # the same request would be refused again (as the operator decides)


class AsyncKube(Protocol):
    """What a shard needs of the async client: one request, one watch stream."""

    async def request(self, method: str, path: str, query: list | None = None, body: Any = None,
                      accept: str | None = None) -> Answer: ...

    def stream(self, path: str, query: list) -> AsyncIterator[dict]: ...


@dataclass(frozen=True)
class ShardPod:
    """One wave item of the shard and its pod as the plan builds it (named after the item, gated)."""

    item: str
    body: dict


@dataclass(frozen=True)
class Shard:
    """Up to ``shard_size`` items of one tenant: its namespace and identity (kubeconfig context)."""

    index: int
    namespace: str
    context: str
    pods: tuple[ShardPod, ...]

    @property
    def run_label(self) -> str:
        """The run's label on the shard's pods (``gpupoc.io/run-id``; empty when the pods carry none)."""
        labels = (self.pods[0].body.get("metadata") or {}).get("labels") or {} if self.pods else {}
        return str(labels.get(RUN_ID) or "")

    @property
    def selector(self) -> str:
        """The shard's pods: its number and, when the pods carry it, the run's label (shard numbers repeat in
        every run of a class, in the same namespaces)."""
        run = self.run_label
        return f"{SHARD_LABEL}={self.index}" + (f",{RUN_ID}={run}" if run else "")


@dataclass(frozen=True)
class CreatedPod:
    """An item's pod as the shard created it: its name and the API server's ``creationTimestamp`` (None when the
    creation's answer was lost and a resend found it existing)."""

    pod: str
    created_at: str | None

    def to_dict(self) -> dict:
        return {"pod": self.pod, "created_at": self.created_at}


@dataclass
class Hooks:
    """The per-pod path's own records and decisions, given by the caller (``steps.bulk``)."""

    submitted: Callable[[str, str | None, int, Answer | None], None]   # item, pod, try, refusal answer
    decide: Callable[[str, str, str, int], NextAttempt | None]         # item, namespace, pod, try
    released: Callable[[], bool] = lambda: False
    # every item's first creation was sent (answered or refused): the pods created, per item
    created: Callable[[dict[str, CreatedPod]], None] = lambda pods: None
    on_log: Callable[[str, list[str]], None] = lambda pod, lines: None


@dataclass
class ItemState:
    item: str
    pod: str | None = None
    try_number: int = 0
    done: bool = False
    deciding: set[str] = field(default_factory=set)  # pods whose ending is being (or was) decided


@dataclass
class ShardResult:
    """What the shard did: per item its last pod and tries, each pod's transitions, the watch's life."""

    items: dict[str, ItemState]
    transitions: dict[str, PodTransitions]
    throttling: Throttling
    watches: int = 0
    relists: int = 0
    gone: int = 0
    errors: list[str] = field(default_factory=list)
    undecided: int = 0  # ended attempts whose decision raised: not resubmitted by the shard (a harness defect)

    def summary(self) -> dict:
        return {"items": len(self.items), "done": sum(s.done for s in self.items.values()),
                "attempts": sum(s.try_number for s in self.items.values()), "pods_watched": len(self.transitions),
                "watches": self.watches, "relists": self.relists, "gone_410": self.gone,
                "throttling": self.throttling.to_dict(), "undecided": self.undecided, "errors": self.errors[:20]}


class TransientWatchError(Exception):
    """The server refused a watch (or its list) for now (429, 5xx, no answer): asked again as the retry
    policy says, after ``retry_after_s`` when the server said so."""

    def __init__(self, message: str, status: int, retry_after_s: float | None = None):
        super().__init__(message)
        self.status = status
        self.retry_after_s = retry_after_s

    @property
    def headers(self) -> dict:
        return {"Retry-After": str(int(self.retry_after_s))} if self.retry_after_s is not None else {}


class ShardRunner:
    """Creates, watches and resubmits one shard's pods (see the module docstring)."""

    def __init__(self, kube: AsyncKube, shard: Shard, bucket: TokenBucket, hooks: Hooks,
                 requeue_grace_s: float = REQUEUE_GRACE_SECONDS, platform_wait_s: float = 60.0,
                 sleep: Callable[[float], Awaitable[None]] = asyncio.sleep):
        self.kube, self.shard, self.bucket, self.hooks, self.sleep = kube, shard, bucket, hooks, sleep
        self.requeue_grace_s, self.platform_wait_s = requeue_grace_s, platform_wait_s
        self.bodies = {p.item: p.body for p in shard.pods}
        self.result = ShardResult({p.item: ItemState(p.item) for p in shard.pods}, {}, Throttling())
        self.finished = asyncio.Event()
        self.pods_path = f"/api/v1/namespaces/{shard.namespace}/pods"
        self._tasks: set[asyncio.Task] = set()
        self._gated: dict[str, bool] = {}  # pod -> it still had the pipeline's gate when last seen
        self._created_at: dict[str, str | None] = {}  # pod -> its creationTimestamp, as the creation's answer said

    # ---- submit ----
    def _body(self, item: str, gated: bool) -> dict:
        body = json.loads(json.dumps(self.bodies[item]))
        meta = body.setdefault("metadata", {})
        meta["name"] = f"{item}-{secrets.token_hex(4)}"[:63]  # as the operator: the item's name, a random suffix
        meta["namespace"] = self.shard.namespace
        meta.setdefault("labels", {})[SHARD_LABEL] = str(self.shard.index)
        if not gated:
            gates = [g for g in body.get("spec", {}).get("schedulingGates") or [] if g.get("name") != PIPELINE_GATE]
            body["spec"]["schedulingGates"] = gates
            if not gates:
                body["spec"].pop("schedulingGates")
        return body

    async def submit(self, item: str, gated: bool) -> None:
        state = self.result.items[item]
        state.try_number += 1
        body = self._body(item, gated)
        # only the answer's metadata is read: the API server sends, and audits, no whole pod back
        answer = await send(self.bucket, lambda: self.kube.request("POST", self.pods_path, body=body,
                                                                   accept=METADATA_ONLY),
                            self.result.throttling, endpoint=f"POST {self.pods_path} ({self.shard.context})")
        if answer.ok or (answer.status == 409 and answer.after_unanswered):
            # a 409 after a send without an answer: that send created the pod (its name has a random suffix)
            state.pod = body["metadata"]["name"]
            self._created_at[state.pod] = ((answer.body or {}).get("metadata") or {}).get("creationTimestamp")
            self.hooks.submitted(item, state.pod, state.try_number, None)
            return
        self.hooks.submitted(item, None, state.try_number, answer)
        if answer.status in REFUSED_FOR_GOOD:
            self._end(state)  # recorded as rejected by the caller: no further attempt
        else:
            self.result.errors.append(answer.gave_up or f"{item}: HTTP {answer.status} {answer.message}")
            self._end(state)

    async def submit_all(self) -> None:
        await asyncio.gather(*(self.submit(p.item, gated=not self.hooks.released()) for p in self.shard.pods))

    def created_pods(self) -> dict[str, CreatedPod]:
        """Each item's pod the shard created (an item refused has none)."""
        return {item: CreatedPod(s.pod, self._created_at.get(s.pod)) for item, s in self.result.items.items()
                if s.pod}

    def _end(self, state: ItemState) -> None:
        state.done = True
        if all(s.done for s in self.result.items.values()):
            self.finished.set()

    # ---- watch ----
    async def _relist(self) -> str:
        """List the shard's pods (each taken as an update; a known pod missing from the list as deleted) and
        return the list's resourceVersion to watch from."""
        self.result.relists += 1
        for t in self.result.transitions.values():  # what changed since the last update seen is not seen
            t.relisted_waiting = t.relisted_waiting or "PodScheduled" not in t.first_true
        answer = await send(self.bucket, lambda: self.kube.request(
            "GET", self.pods_path, query=[("labelSelector", self.shard.selector)]), self.result.throttling,
            endpoint=f"GET {self.pods_path}?labelSelector={self.shard.selector} ({self.shard.context})")
        if not answer.ok:
            what = (f"listing {self.pods_path}?labelSelector={self.shard.selector}: "
                    f"HTTP {answer.status} {answer.message}")
            if answer.status in (0, 429) or answer.status >= 500:  # 0: no answer at all
                raise TransientWatchError(answer.gave_up or what, answer.status)
            raise RuntimeError(what)
        listed = {p["metadata"]["name"]: p for p in (answer.body or {}).get("items") or []}
        for pod in listed.values():
            self.on_pod("MODIFIED", pod)
        for name, t in list(self.result.transitions.items()):
            if name not in listed:
                self.on_pod("DELETED", {"metadata": {"name": name, "namespace": t.namespace,
                                                     "annotations": {}}, "_item": t.item})
        return str(((answer.body or {}).get("metadata") or {}).get("resourceVersion") or "")

    async def watch(self) -> None:
        """One watch for the shard until every item is done, as client-go's reflector keeps one: resumed from the
        last resourceVersion when the stream ends or breaks, asked again after a pause when the server refuses it
        for now (429, 5xx), re-listed after 410 Gone. Only a refusal for good (403, 400 ...) ends it."""
        rv: str | None = None  # None: list first
        backoff = Backoff(f"watch {self.pods_path}?labelSelector={self.shard.selector} ({self.shard.context})",
                          WATCH_POLICY)
        while not self.finished.is_set():
            try:
                if rv is None:
                    rv = await self._relist()
                self.result.watches += 1
                rv = await self._watch_from(rv)
                backoff.reset()  # the stream ended (the server's timeout, a cut): watched again at once
                continue
            except TransientWatchError as exc:
                self.result.errors.append(f"watch refused for now ({exc}); asked again from {rv}")
                wait = backoff.next_wait(exc.status, exc.headers, str(exc), for_now=True)
            except (OSError, asyncio.TimeoutError, SourceUnavailable) as exc:  # the stream broke: resume from rv
                self.result.errors.append(f"watch broke ({type(exc).__name__}); resumed from {rv}")
                wait = backoff.next_wait(0, None, type(exc).__name__)
            if wait is None:
                raise RuntimeError(str(backoff.error()))
            await self.sleep(wait)

    async def _watch_from(self, rv: str) -> str:
        """One watch stream from ``rv``; the resourceVersion to go on from when it ends."""
        query = [("watch", "true"), ("labelSelector", self.shard.selector), ("allowWatchBookmarks", "true"),
                 ("timeoutSeconds", str(WATCH_SECONDS)), ("resourceVersion", rv)]
        async for event in self.kube.stream(self.pods_path, query):
            obj = event.get("object") or {}
            if event.get("type") == "ERROR":
                return await self._watch_error(obj)
            rv = (obj.get("metadata") or {}).get("resourceVersion") or rv
            if event.get("type") != "BOOKMARK":
                self.on_pod(event.get("type") or "", obj)
        return rv

    async def _watch_error(self, status: dict) -> str:
        """A watch's ERROR event: 410 re-lists (the new resourceVersion), 429 and 5xx are for now, others for good."""
        code = int(status.get("code") or 0)
        message = status.get("message") or status
        if code == 410:
            self.result.gone += 1
            return await self._relist()
        if code == 429 or code >= 500:
            pause = (status.get("details") or {}).get("retryAfterSeconds")
            raise TransientWatchError(f"HTTP {code} {message}", code, float(pause) if pause is not None else None)
        raise RuntimeError(f"watch {self.pods_path}: {message}")

    def on_pod(self, type_: str, pod: dict) -> None:
        """One watched change of a shard pod: its transitions, and the end of an attempt to decide on."""
        meta = pod.get("metadata") or {}
        name, item = meta.get("name") or "", item_key(pod) or pod.get("_item") or ""
        state = self.result.items.get(item)
        if state is None:
            return
        if type_ != "DELETED":
            t = self.result.transitions.setdefault(name, PodTransitions(self.shard.namespace, name, item))
            t.observe(pod)
            self._gated[name] = any(g.get("name") == PIPELINE_GATE
                                    for g in (pod.get("spec") or {}).get("schedulingGates") or [])
            if state.pod != name and name not in state.deciding and not meta.get("deletionTimestamp"):
                state.pod = name  # the platform's own new pod of the item (a requeue): followed
        if state.done or name != state.pod or name in state.deciding:
            return
        phase = (pod.get("status") or {}).get("phase")
        if phase == "Succeeded":
            self._end(state)
        elif phase == "Failed" or type_ == "DELETED":
            state.deciding.add(name)
            self._spawn(self._ended(state, name, phase == "Failed"))

    def _spawn(self, coro: Awaitable) -> None:
        task = asyncio.ensure_future(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _ended(self, state: ItemState, name: str, failed: bool) -> None:
        """Decide the ended attempt as the per-pod path does; resubmit, follow the platform or end the item."""
        if failed:
            await self._log_tail(name)
        try:
            nxt = await asyncio.to_thread(self.hooks.decide, state.item, self.shard.namespace, name, state.try_number)
        except Exception as exc:  # noqa: BLE001 - named in the shard's result; the observer still decides
            self.result.errors.append(f"{state.item}: deciding {name} failed: {exc}")
            self.result.undecided += 1
            log.warning("deciding %s of %s failed (%s): no further attempt by this shard", name, state.item, exc)
            nxt = NextAttempt.NONE
        if nxt is None:
            state.deciding.discard(name)  # not over after all (still there): the watch goes on
            return
        if nxt is NextAttempt.NONE:
            return self._end(state)
        wait = self.requeue_grace_s if nxt is NextAttempt.RESUBMIT else self.platform_wait_s
        deadline = time.monotonic() + wait
        while time.monotonic() < deadline and state.pod == name:
            await asyncio.sleep(0.2)
        if state.pod != name:
            return  # the platform's own new pod came: followed by the watch
        if nxt is NextAttempt.RESUBMIT:
            # an attempt the platform took away after the release is submitted ungated, even before the
            # release's record is written (the release of a large wave takes seconds)
            await self.submit(state.item, gated=self._gated.get(name, True) and not self.hooks.released())
        else:
            self.result.errors.append(f"{state.item}: no requeued pod within {wait:.0f} s")
            self._end(state)

    async def _log_tail(self, name: str) -> None:
        answer = await send(self.bucket, lambda: self.kube.request(
            "GET", f"{self.pods_path}/{name}/log", query=[("tailLines", str(LOG_TAIL_LINES))]), self.result.throttling)
        text = (answer.body or {}).get("_text", "") if answer.ok else f"(log not readable: {answer.message})"
        self.hooks.on_log(name, str(text).splitlines()[-LOG_TAIL_LINES:])

    async def run(self, timeout_s: float) -> ShardResult:
        """Submit every item, watch until each is done or ``timeout_s`` passed; the shard's result."""
        watcher = asyncio.ensure_future(self.watch())
        try:
            await self.submit_all()
            self.hooks.created(self.created_pods())
            done_or_failed = asyncio.ensure_future(self.finished.wait())
            await asyncio.wait({done_or_failed, watcher}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
            done_or_failed.cancel()
            log.info("shard %d: %d of %d items have their outcome", self.shard.index,
                     sum(s.done for s in self.result.items.values()), len(self.result.items))
            if watcher.done() and watcher.exception():
                self.result.errors.append(f"watch ended: {watcher.exception()}")
            open_items = [s.item for s in self.result.items.values() if not s.done]
            if open_items:
                self.result.errors.append(f"{len(open_items)} item(s) without an outcome at the deadline "
                                          f"({', '.join(open_items[:3])})")
        finally:
            watcher.cancel()
            for t in list(self._tasks):
                t.cancel()
            await asyncio.gather(watcher, *self._tasks, return_exceptions=True)
        return self.result
