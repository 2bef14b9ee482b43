"""``GET pods/{name}/log``: a container's log as plain text, optionally followed until the container ends.

``LogOptions`` reads the query as the API server does (container, follow, timestamps, tailLines,
sinceSeconds/sinceTime, limitBytes, previous); ``open_log`` finds the log or answers the API server's
"waiting to start" errors; a ``LogSender`` writes lines within the byte limit; ``follow`` sends new lines
until the container ends, the log is closed or the pod is replaced (kpo pitfall 1).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import datetime, timedelta

from aiohttp import web

from gpupoc.sim import clock
from gpupoc.sim.api.context import Ctx, int_param, truthy
from gpupoc.sim.api.registry import ResourceSpec
from gpupoc.sim.api.resources import fetch
from gpupoc.sim.api.status import bad_request
from gpupoc.sim.logs import ContainerLog

TERMINAL = ("Succeeded", "Failed")
PULL_FAILURES = ("ErrImagePull", "ImagePullBackOff", "InvalidImageName")


def pick_container(pod: dict, requested: str | None) -> str:
    name = pod["metadata"]["name"]
    containers = [c["name"] for c in (pod.get("spec") or {}).get("containers") or []]
    inits = [c["name"] for c in (pod.get("spec") or {}).get("initContainers") or []]
    if not requested:
        if len(containers) == 1:
            return containers[0]
        raise bad_request(f"a container name must be specified for pod {name}, choose one of: "
                          f"[{' '.join(containers)}]" + (f" or one of the init containers: [{' '.join(inits)}]"
                                                         if inits else ""))
    if requested not in containers + inits:
        raise bad_request(f"container {requested} is not valid for pod {name}")
    return requested


def container_status(pod: dict, container: str) -> dict | None:
    status = pod.get("status") or {}
    for cs in (status.get("containerStatuses") or []) + (status.get("initContainerStatuses") or []):
        if cs.get("name") == container:
            return cs
    return None


def terminated(pod: dict, container: str) -> bool:
    cs = container_status(pod, container)
    return bool(cs and (cs.get("state") or {}).get("terminated")) or \
        (pod.get("status") or {}).get("phase") in TERMINAL


@dataclass(frozen=True)
class LogOptions:
    """The log request's query (PodLogOptions)."""

    container: str
    follow: bool
    timestamps: bool
    tail: int | None
    since_time: datetime | None
    limit: int | None
    previous: bool

    @classmethod
    def of(cls, ctx: Ctx, pod: dict) -> "LogOptions":
        q = ctx.query
        container = pick_container(pod, q.get("container"))
        follow, timestamps = truthy(q.get("follow")), truthy(q.get("timestamps"))
        tail = int_param(q, "tailLines")
        since = int_param(q, "sinceSeconds")
        limit = int_param(q, "limitBytes")
        try:
            since_time = clock.parse(q["sinceTime"]) if q.get("sinceTime") else None
        except ValueError:
            raise bad_request(f"sinceTime: invalid value {q['sinceTime']!r}: expected RFC3339 such as "
                              "2024-01-02T15:04:05Z") from None
        if since is not None:
            since_time = clock.now() - timedelta(seconds=since)
        return cls(container, follow, timestamps, tail, since_time, limit, truthy(q.get("previous")))


def open_log(ctx: Ctx, pod: dict, opts: LogOptions) -> ContainerLog | None:
    """The container's log (its previous run's with ``previous``); None while a running container has
    written nothing yet; 400 for a previous run that never ended or a container still waiting to start."""
    ns, name, container = ctx.info.namespace, ctx.info.name, opts.container
    cs = container_status(pod, container)
    if opts.previous:
        if not (cs and (cs.get("lastState") or {}).get("terminated")):
            raise bad_request(f'previous terminated container "{container}" in pod "{name}" not found')
        log = ctx.state.logs.get(ns, name, f"{container}:previous")
    else:
        log = ctx.state.logs.get(ns, name, container)
    if log is None and not terminated(pod, container):
        waiting = ((cs or {}).get("state") or {}).get("waiting") if cs else None
        if waiting and waiting.get("reason") in PULL_FAILURES:
            raise bad_request(f'container "{container}" in pod "{name}" is waiting to start: trying and failing '
                              "to pull image")
        reason = (waiting or {}).get("reason") or "ContainerCreating"
        raise bad_request(f'container "{container}" in pod "{name}" is waiting to start: {reason}')
    return log


class LogSender:
    """Writes log lines to the response: from ``since_time`` on, with timestamps if asked, within ``limit``."""

    def __init__(self, resp: web.StreamResponse, opts: LogOptions):
        self.resp = resp
        self.opts = opts
        self.budget = opts.limit if opts.limit is not None and opts.limit > 0 else None  # bytes still allowed

    async def send(self, lines) -> bool:
        """Write ``lines`` ((time, text) pairs); False once the byte limit is used up."""
        chunk = []
        for ts, text in lines:
            if self.opts.since_time is not None and ts < self.opts.since_time:
                continue
            chunk.append(f"{clock.rfc3339_nano(ts)} {text}\n" if self.opts.timestamps else f"{text}\n")
        data = "".join(chunk).encode()
        if self.budget is not None:
            data = data[: self.budget]
            self.budget -= len(data)
        if data:
            await self.resp.write(data)
        return self.budget is None or self.budget > 0


def _replaced(current: dict | None, pod: dict) -> bool:
    return current is None or current["metadata"]["uid"] != pod["metadata"]["uid"]


async def follow(ctx: Ctx, pod: dict, opts: LogOptions, log: ContainerLog | None, sent: int,
                 sender: LogSender) -> None:
    """Send new lines (``sent`` already sent) until the container ends, the log closes or the pod goes."""
    ns, name, container = ctx.info.namespace, ctx.info.name, opts.container
    more = True
    while more:
        if log is None:
            log = ctx.state.logs.get(ns, name, container)
            if log is None:
                await asyncio.sleep(0.5)
                current = ctx.state.store.get("pods", ns, name)
                if _replaced(current, pod) or terminated(current, container):
                    break
                continue
            sent = 0
        if len(log.lines) < sent:
            sent = 0  # cleared
        if len(log.lines) > sent:
            new = log.lines[sent:]
            sent += len(new)
            more = await sender.send(new)
            continue
        if log.closed:
            break
        current = ctx.state.store.get("pods", ns, name)
        if _replaced(current, pod):
            break
        if terminated(current, container) and len(log.lines) == sent:
            await log.wait_change(0.2)
            if len(log.lines) == sent:
                break
            continue
        await log.wait_change(1.0)


async def pod_log(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    """``GET pods/{name}/log``: plain text, optionally followed until the container ends (pitfall 1)."""
    pod = fetch(ctx, spec)
    opts = LogOptions.of(ctx, pod)
    log = open_log(ctx, pod, opts)
    resp = web.StreamResponse(headers={"Content-Type": "text/plain", "Cache-Control": "no-cache, private"})
    resp.enable_chunked_encoding()
    ctx.stream = resp
    await resp.prepare(ctx.request)
    sender = LogSender(resp, opts)
    sent, more = 0, True
    if log is not None:
        lines = list(log.lines)
        if opts.tail is not None and opts.tail >= 0:
            lines = lines[-opts.tail:] if opts.tail else []
        sent = len(log.lines)
        more = await sender.send(lines)
    if opts.follow and not opts.previous and more:
        await follow(ctx, pod, opts, log, sent, sender)
    await resp.write_eof()
    return resp
