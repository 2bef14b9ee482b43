"""Watch streams: one JSON event per line (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR), chunked.

``watch`` reads the request's watch options (``WatchOptions``), then a ``Watcher`` sends the starting state
(synthetic ADDED for every matching object, or the backlog since the given resourceVersion) and the live
changes, with the selector's semantics (leaving the selection is DELETED, entering it ADDED) and bookmarks.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field

from aiohttp import web

from gpupoc.sim import tables
from gpupoc.sim.api.context import Ctx, int_param, truthy
from gpupoc.sim.api.compaction import EXPIRED_WATCH
from gpupoc.sim.api.manners import MANNERS
from gpupoc.sim.api.registry import ResourceSpec
from gpupoc.sim.api.resources import matching, selector_of
from gpupoc.sim.api.status import bad_request, status_obj
from gpupoc.sim.selectors import Selector
from gpupoc.sim.store import Change, Gone, Store, watch_line

DEFAULT_TIMEOUT = 1800
BOOKMARK_EVERY = 30.0
PRE_TIMEOUT_BOOKMARK = 2.0  # kube-apiserver's cacheWatcher: a bookmark 2 s before a watch's deadline
WRITE_BATCH = 500  # events per socket write at most
Key = tuple[str, str]
INITIAL_EVENTS_END = "k8s.io/initial-events-end"


@dataclass(frozen=True)
class WatchOptions:
    """What a watch request asks for: how long, bookmarks, Table rows, which namespace and name, since when."""

    timeout: float
    bookmarks: bool
    table: bool
    include: str  # includeObject of Table rows
    namespace: str | None
    name: str
    since: int | None  # resourceVersion to resume after; None: start with every matching object
    initial_events: bool = False  # sendInitialEvents (a watch-list): every object, then the initial-events-end bookmark
    expires: bool = False  # watch-expiry: the stream ends at its timeout with 410 Gone (its history compacted)

    @classmethod
    def of(cls, ctx: Ctx, spec: ResourceSpec) -> "WatchOptions":
        q = ctx.query
        timeout = int_param(q, "timeoutSeconds", DEFAULT_TIMEOUT) or DEFAULT_TIMEOUT
        manners = ctx.request.app[MANNERS] if MANNERS in ctx.request.app else None
        cut = manners.watch_cut() if manners else None
        if cut is not None:
            timeout = min(timeout, cut)  # watch-cuts: the server ends the stream early
        life = manners.watch_life() if manners else None
        expires = life is not None and life < timeout
        timeout = life if expires else timeout
        initial_events = truthy(q.get("sendInitialEvents"))
        return cls(timeout, truthy(q.get("allowWatchBookmarks")), ctx.wants_table(), q.get("includeObject", "Metadata"),
                   ctx.info.namespace if spec.namespaced and ctx.info.namespace else None, ctx.info.name,
                   None if initial_events else _since(q.get("resourceVersion") or ""), initial_events, expires)


def _since(raw_rv: str) -> int | None:
    if raw_rv in ("", "0"):
        return None
    try:
        return int(raw_rv)
    except ValueError:
        raise bad_request(f"resourceVersion: Invalid value: \"{raw_rv}\": strconv.ParseUint: parsing "
                          f"\"{raw_rv}\": invalid syntax") from None


@dataclass
class Watcher:
    """One watch stream: what it selects, which objects it has seen matching, and how it writes events."""

    spec: ResourceSpec
    options: WatchOptions
    selector: Selector
    resp: web.StreamResponse
    inside: set[Key] = field(default_factory=set)  # objects this watcher has seen matching

    def wanted(self, obj: dict) -> bool:
        if self.options.name and obj["metadata"]["name"] != self.options.name:
            return False
        return self.selector.matches(obj)

    def translate(self, type_: str, obj: dict) -> str | None:
        """Selector semantics: leaving the selection is DELETED, entering it is ADDED."""
        key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        if self.wanted(obj):
            if type_ == "DELETED":
                self.inside.discard(key)
                return type_
            was = key in self.inside
            self.inside.add(key)
            return "ADDED" if type_ == "MODIFIED" and not was else type_
        if key in self.inside:
            self.inside.discard(key)
            return "DELETED"
        return None

    def render(self, obj: dict) -> dict:
        if self.options.table:
            return tables.to_table(self.spec.plural, [obj], obj["metadata"].get("resourceVersion", ""),
                                   self.options.include)
        return obj

    def encode(self, ch: Change) -> bytes:
        """The change as this watcher sends it (b"" when it does not concern the watcher)."""
        type_ = self.translate(ch.type, ch.obj)
        if not type_:
            return b""
        if not self.options.table and type_ == ch.type:
            return ch.line()  # encoded once for every watcher
        return watch_line(type_, self.render(ch.obj))

    async def send_initial(self, ctx: Ctx) -> None:
        """Every object matching now, as ADDED."""
        initial = matching(ctx, self.spec, self.selector)
        if self.options.name:
            initial = [o for o in initial if o["metadata"]["name"] == self.options.name]
        for start in range(0, len(initial), WRITE_BATCH):
            part = initial[start:start + WRITE_BATCH]
            for obj in part:
                self.inside.add((obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))
            await self.resp.write(b"".join(watch_line("ADDED", self.render(obj)) for obj in part))

    async def send_initial_events_end(self, store: Store) -> None:
        """A watch-list's end of its initial events: the bookmark client-go's reflector waits for (kubectl v1.35+
        watches this way), annotated ``k8s.io/initial-events-end``, at the resourceVersion the list reached."""
        await self.resp.write(watch_line("BOOKMARK", {
            "kind": self.spec.kind, "apiVersion": self.spec.group_version,
            "metadata": {"resourceVersion": str(store.rv), "annotations": {INITIAL_EVENTS_END: "true"}}}))

    async def bookmark(self, store: Store) -> None:
        await self.resp.write(watch_line("BOOKMARK", {
            "kind": self.spec.kind, "apiVersion": self.spec.group_version,
            "metadata": {"resourceVersion": str(store.rv)}}))

    async def send_backlog(self, ctx: Ctx, backlog: list[Change]) -> None:
        """The changes after ``since``; objects matching now are taken as matching then (the store keeps no
        old versions)."""
        self.inside.update((o["metadata"].get("namespace", ""), o["metadata"]["name"])
                           for o in matching(ctx, self.spec, self.selector, ordered=False)
                           if not self.options.name or o["metadata"]["name"] == self.options.name)
        for start in range(0, len(backlog), WRITE_BATCH):
            chunk = b"".join(self.encode(ch) for ch in backlog[start:start + WRITE_BATCH])
            if chunk:
                await self.resp.write(chunk)

    async def send_live(self, queue: asyncio.Queue, store: Store) -> None:
        """Live changes until the timeout; a bookmark after ``BOOKMARK_EVERY`` seconds of silence and, as
        kube-apiserver's watch cache sends one, ``PRE_TIMEOUT_BOOKMARK`` seconds before the timeout (a client
        resuming a watch learns from it that it has every change so far)."""
        deadline = time.monotonic() + self.options.timeout
        pre_timeout = (deadline - PRE_TIMEOUT_BOOKMARK if self.options.bookmarks and not self.options.expires
                       and self.options.timeout > PRE_TIMEOUT_BOOKMARK
                       else float("inf"))
        last_sent = time.monotonic()
        while True:
            now = time.monotonic()
            left = deadline - now
            if left <= 0:
                break
            if now >= pre_timeout:
                await self.bookmark(store)
                pre_timeout, last_sent = float("inf"), now
                continue
            try:
                async with asyncio.timeout(min(left, BOOKMARK_EVERY, max(0.0, pre_timeout - now))):
                    first = await queue.get()
            except TimeoutError:
                if self.options.bookmarks and time.monotonic() - last_sent >= BOOKMARK_EVERY - 0.01:
                    await self.bookmark(store)
                    last_sent = time.monotonic()
                continue
            # every change queued meanwhile goes out in the same write: one socket write per loop turn,
            # not per event, so a busy server does not fall behind its watchers
            batch = [first]
            while not queue.empty() and len(batch) < WRITE_BATCH:
                batch.append(queue.get_nowait())
            chunk = b"".join(self.encode(ch) for ch in batch)
            if chunk:
                await self.resp.write(chunk)
                last_sent = time.monotonic()


async def watch(ctx: Ctx, spec: ResourceSpec) -> web.StreamResponse:
    """Serve ``?watch=true``: backlog since resourceVersion (or synthetic ADDED for all), then live changes."""
    selector = selector_of(ctx, spec.plural)
    options = WatchOptions.of(ctx, spec)
    store = ctx.state.store
    resp = web.StreamResponse(headers={"Content-Type": "application/json", "Cache-Control": "no-cache, private"})
    resp.enable_chunked_encoding()
    ctx.stream = resp
    watcher = Watcher(spec, options, selector, resp)
    manners = ctx.request.app[MANNERS] if MANNERS in ctx.request.app else None
    try:
        expired = manners.expired(options.since, store.rv) if manners else None
        if expired:
            raise Gone(expired)
        w, backlog = store.watch(spec.plural, options.namespace, options.since)
    except Gone as exc:
        return await _gone(ctx, resp, str(exc))
    try:
        await resp.prepare(ctx.request)
        if options.since is None:
            await watcher.send_initial(ctx)
            if options.initial_events:
                await watcher.send_initial_events_end(store)
        else:
            await watcher.send_backlog(ctx, backlog)
        await watcher.send_live(w.queue, store)
        if options.expires:  # watch-expiry: the stream's revision was compacted away
            await resp.write(watch_line("ERROR", status_obj(410, EXPIRED_WATCH, "Expired")))
        await resp.write_eof()
    except (ConnectionResetError, ConnectionError):
        pass
    finally:
        store.unwatch(w)
    return resp


async def _gone(ctx: Ctx, resp: web.StreamResponse, message: str) -> web.StreamResponse:
    """A watch from a resourceVersion whose history is gone: one ERROR event, 410 ``Expired``, as kube-apiserver
    answers once it passed authorization (the stream itself is 200)."""
    await resp.prepare(ctx.request)
    await resp.write(watch_line("ERROR", status_obj(410, message, "Expired")))
    await resp.write_eof()
    return resp
