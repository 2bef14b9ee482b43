"""Watch streams: one JSON event per line (ADDED, MODIFIED, DELETED, BOOKMARK, ERROR), chunked."""

from __future__ import annotations

import asyncio
import time

from aiohttp import web

from gpupoc.sim import tables
from gpupoc.sim.api.context import Ctx, int_param, truthy
from gpupoc.sim.api.manners import MANNERS
from gpupoc.sim.api.registry import ResourceSpec
from gpupoc.sim.api.resources import matching, selector_of
from gpupoc.sim.api.status import bad_request, status_obj
from gpupoc.sim.store import Change, Gone, watch_line

DEFAULT_TIMEOUT = 1800
BOOKMARK_EVERY = 30.0
WRITE_BATCH = 500  # events per socket write at most



async def watch(ctx: Ctx, spec: ResourceSpec) -> web.StreamResponse:
    """Serve ``?watch=true``: backlog since resourceVersion (or synthetic ADDED for all), then live changes."""
    sel = selector_of(ctx, spec.plural)
    q = ctx.query
    timeout = int_param(q, "timeoutSeconds", DEFAULT_TIMEOUT) or DEFAULT_TIMEOUT
    cut = ctx.request.app[MANNERS].watch_cut() if MANNERS in ctx.request.app else None
    if cut is not None:
        timeout = min(timeout, cut)  # watch-cuts: the server ends the stream early
    bookmarks = truthy(q.get("allowWatchBookmarks"))
    table = ctx.wants_table()
    include = q.get("includeObject", "Metadata")
    store = ctx.state.store
    ns = ctx.info.namespace if spec.namespaced and ctx.info.namespace else None
    name = ctx.info.name
    raw_rv = q.get("resourceVersion") or ""
    since = None
    if raw_rv not in ("", "0"):
        try:
            since = int(raw_rv)
        except ValueError:
            raise bad_request(f"resourceVersion: Invalid value: \"{raw_rv}\": strconv.ParseUint: parsing "
                              f"\"{raw_rv}\": invalid syntax") from None

    resp = web.StreamResponse(headers={"Content-Type": "application/json", "Cache-Control": "no-cache, private"})
    resp.enable_chunked_encoding()
    ctx.stream = resp

    def wanted(obj: dict) -> bool:
        if name and obj["metadata"]["name"] != name:
            return False
        return sel.matches(obj)

    inside: set[tuple[str, str]] = set()  # objects this watcher has seen matching

    def translate(type_: str, obj: dict) -> str | None:
        """Selector semantics: leaving the selection is DELETED, entering it is ADDED."""
        key = (obj["metadata"].get("namespace", ""), obj["metadata"]["name"])
        if wanted(obj):
            if type_ == "DELETED":
                inside.discard(key)
                return type_
            was = key in inside
            inside.add(key)
            return "ADDED" if type_ == "MODIFIED" and not was else type_
        if key in inside:
            inside.discard(key)
            return "DELETED"
        return None

    def render(obj: dict) -> dict:
        if table:
            return tables.to_table(spec.plural, [obj], obj["metadata"].get("resourceVersion", ""), include)
        return obj

    def encode(ch: Change) -> bytes:
        """The change as this watcher sends it (b"" when it does not concern the watcher)."""
        type_ = translate(ch.type, ch.obj)
        if not type_:
            return b""
        if not table and type_ == ch.type:
            return ch.line()  # encoded once for every watcher
        return watch_line(type_, render(ch.obj))

    try:
        w, backlog = store.watch(spec.plural, ns, since)
    except Gone as exc:
        await resp.prepare(ctx.request)
        await resp.write(watch_line("ERROR", status_obj(410, str(exc), "Expired")))
        await resp.write_eof()
        return resp
    try:
        await resp.prepare(ctx.request)
        if since is None:
            initial = matching(ctx, spec, sel)
            if name:
                initial = [o for o in initial if o["metadata"]["name"] == name]
            for start in range(0, len(initial), WRITE_BATCH):
                part = initial[start:start + WRITE_BATCH]
                for obj in part:
                    inside.add((obj["metadata"].get("namespace", ""), obj["metadata"]["name"]))
                await resp.write(b"".join(watch_line("ADDED", render(obj)) for obj in part))
        else:
            # objects matching now are taken as matching at ``since`` (the store keeps no old versions)
            inside.update((o["metadata"].get("namespace", ""), o["metadata"]["name"])
                          for o in matching(ctx, spec, sel) if not name or o["metadata"]["name"] == name)
            for start in range(0, len(backlog), WRITE_BATCH):
                chunk = b"".join(encode(ch) for ch in backlog[start:start + WRITE_BATCH])
                if chunk:
                    await resp.write(chunk)
        deadline = time.monotonic() + timeout
        last_sent = time.monotonic()
        queue = w.queue
        while True:
            left = deadline - time.monotonic()
            if left <= 0:
                break
            try:
                async with asyncio.timeout(min(left, BOOKMARK_EVERY)):
                    first = await queue.get()
            except TimeoutError:
                if bookmarks and time.monotonic() - last_sent >= BOOKMARK_EVERY - 0.01:
                    await resp.write(watch_line("BOOKMARK", {"kind": spec.kind, "apiVersion": spec.group_version,
                                                             "metadata": {"resourceVersion": str(store.rv)}}))
                    last_sent = time.monotonic()
                continue
            # every change queued meanwhile goes out in the same write: one socket write per loop turn,
            # not per event, so a busy server does not fall behind its watchers
            batch = [first]
            while not queue.empty() and len(batch) < WRITE_BATCH:
                batch.append(queue.get_nowait())
            chunk = b"".join(encode(ch) for ch in batch)
            if chunk:
                await resp.write(chunk)
                last_sent = time.monotonic()
        await resp.write_eof()
    except (ConnectionResetError, ConnectionError):
        pass
    finally:
        store.unwatch(w)
    return resp
