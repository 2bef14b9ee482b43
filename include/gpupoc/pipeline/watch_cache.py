"""The observer's view of the cluster by watch: one list per collection, then a watch kept open, read from a cache.

client-go's informers and clusterloader2's observers work this way, and so does this cache: the first read of a
collection (``GET .../pods?labelSelector=...``) lists it once and starts a watch from the list's
resourceVersion with bookmarks; every later read of the same collection is answered from the cache, without a
request. A watch the server ends (its timeout, a cut) is watched again from the last resourceVersion it gave
(a bookmark's included); only 410 Gone (the history compacted) brings a relist, and a refusal for now (429,
5xx) is watched again after ``Retry-After`` or a back-off. A collection the server does not let be watched
(403, 405 ...) goes back to being listed on every read, so the observer never sees less than by listing.

Each change to an object is handed, with the moment it was received, to the collection's ``on_change`` (the
observer keeps every pod state change by its receipt time). ``WatchingCaller.stats`` counts the lists,
relists, watches and bytes, so the harness's own API load is on record.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Callable, Protocol

from gpupoc.common.api_retry import Backoff, RetryPolicy
from gpupoc.common.timefmt import utcnow
from gpupoc.pipeline.k8s import KubeCaller, Response, request_info
from gpupoc.pipeline.watch_stream import StreamHandle

# what the observer reads again and again: watched; anything else is passed to the server as asked
WATCHED = frozenset({"pods", "events", "workloads", "podgroups", "deployments", "replicasets", "endpointslices",
                     "resourceclaims"})
WATCH_SECONDS = 300
WATCH_POLICY = RetryPolicy(attempts=1_000_000, max_total_s=float("inf"), max_wait_s=10.0)
Key = tuple[str, str]
OnChange = Callable[[str, dict, datetime], None]  # (ADDED | MODIFIED | DELETED | RELISTED, object, received at)


class Streamer(Protocol):
    """A caller that can also open a watch stream (``ApiCaller``)."""

    context: str

    def call(self, method: str, path: str, **kw: Any) -> Response: ...

    def stream(self, path: str, query: list[tuple[str, str]], read_timeout_s: float,
               handle: StreamHandle) -> Any: ...


@dataclass
class CollectionStats:
    """One collection's life: lists (the first and each relist), watches opened, events, bytes read."""

    path: str
    lists: int = 0
    relists_after_gone: int = 0
    watches: int = 0
    events: int = 0
    bookmarks: int = 0
    bytes_listed: int = 0
    bytes_watched: int = 0
    refusals: list[str] = field(default_factory=list)
    catch_up_seconds: float | None = None  # a resumed collection's watch: from its request to its bookmark
    listing_only: str = ""  # why the collection is listed on every read (a watch refused for good)

    def to_dict(self) -> dict:
        return {k: v for k, v in self.__dict__.items() if k != "refusals"} | {"refusals": self.refusals[:10]}


def _key(obj: dict) -> Key:
    m = obj.get("metadata") or {}
    return m.get("namespace") or "", m.get("name") or ""


class Collection:
    """One watched collection (path and query) and its cache."""

    def __init__(self, caller: Streamer, path: str, query: list[tuple[str, str]], on_change: OnChange | None,
                 clock: Callable[[], datetime] = utcnow, sleep: Callable[[float], None] = time.sleep):
        self.caller, self.path, self.query, self.on_change = caller, path, query, on_change
        self.clock, self.sleep = clock, sleep
        self.items: dict[Key, dict] = {}
        self.rv = ""
        self.stats = CollectionStats(path + ("?" + "&".join(f"{k}={v}" for k, v in query) if query else ""))
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._handle = StreamHandle()
        self._thread: threading.Thread | None = None

    # ---- reads ----
    def answer(self) -> Response:
        """The cached list, as the server would answer it (or the server's own answer when listing only)."""
        if self.stats.listing_only:
            return self.caller.call("GET", self.path, query=self.query)
        with self._lock:
            items = list(self.items.values())
            rv = self.rv
        return Response(200, {"kind": "List", "apiVersion": "v1", "metadata": {"resourceVersion": rv},
                              "items": items})

    @classmethod
    def seeded(cls, caller: Streamer, path: str, query: list[tuple[str, str]], rv: str,
               items: list[dict]) -> "Collection":
        """A collection holding ``items`` at ``rv``, as a cache saved earlier left it (not yet watched)."""
        c = cls(caller, path, query, None)
        c.items, c.rv = {_key(o): o for o in items}, rv
        return c

    def held(self) -> tuple[list[dict], str]:
        """The objects the cache holds and its resourceVersion, as of now."""
        with self._lock:
            return list(self.items.values()), self.rv

    # ---- life ----
    def start(self) -> Response:
        """The first list; the watch from its resourceVersion starts when the list succeeded."""
        r = self._list()
        if r.ok:
            self._thread = threading.Thread(target=self._run, name=f"watch {self.path}", daemon=True)
            self._thread.start()
        else:
            self.stats.listing_only = f"the first list answered HTTP {r.status}"
        return r

    def stop(self) -> None:
        self._stop.set()
        self._handle.close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def _list(self) -> Response:
        r = self.caller.call("GET", self.path, query=self.query)
        self.stats.lists += 1
        self.stats.bytes_listed += len(r.text or "")
        if not (r.ok and isinstance(r.body, dict)):
            return r
        received = self.clock()
        fresh = {_key(o): o for o in r.body.get("items") or []}
        with self._lock:
            gone = [o for k, o in self.items.items() if k not in fresh]
            changed = [o for k, o in fresh.items() if self.items.get(k) != o]
            self.items = fresh
            self.rv = str((r.body.get("metadata") or {}).get("resourceVersion") or "")
        relisted = [("RELISTED", {})] if self.stats.lists > 1 else []
        self._tell(relisted + [("DELETED", o) for o in gone] + [("MODIFIED", o) for o in changed], received)
        return r

    def _tell(self, changes: list[tuple[str, dict]], received: datetime) -> None:
        if self.on_change:
            for kind, obj in changes:
                self.on_change(kind, obj, received)

    def _run(self) -> None:
        """Watch until stopped: again from the last resourceVersion when a stream ends, a relist after 410."""
        backoff = Backoff(f"watch {self.stats.path} (context {self.caller.context})", WATCH_POLICY)
        while not self._stop.is_set():
            try:
                refusal = self._watch_once()
            except Exception as exc:  # noqa: BLE001 - a cut stream is watched again from where it was
                refusal = {"code": 0, "message": type(exc).__name__}
            if self._stop.is_set():
                return
            if refusal is None:
                backoff.reset()
                continue
            code = int(refusal.get("code") or 0)
            if code == 410:
                self.stats.relists_after_gone += 1
                if self._list().ok:
                    continue
            self.stats.refusals.append(f"HTTP {code}: {str(refusal.get('message') or '')[:120]}")
            wait = backoff.next_wait(code, {"Retry-After": refusal.get("retryAfterSeconds")},
                                     for_now=code in (0, 410, 429) or code >= 500)
            if wait is None:
                self.stats.listing_only = f"the watch was refused: HTTP {code}"
                return
            self._stop.wait(wait)

    def _watch_once(self) -> dict | None:
        """One stream from the cache's resourceVersion; the refusal's Status when it ended with one."""
        query = [*self.query, ("watch", "true"), ("allowWatchBookmarks", "true"),
                 ("resourceVersion", self.rv), ("timeoutSeconds", str(WATCH_SECONDS))]
        self._handle = StreamHandle()
        self.stats.watches += 1
        try:
            for event in self.caller.stream(self.path, query, WATCH_SECONDS + 30, self._handle):
                if self._stop.is_set():
                    return None
                refusal = self._take(event)
                if refusal is not None:
                    return refusal
            return None
        finally:
            self.stats.bytes_watched += self._handle.bytes_read

    def catch_up(self, timeout_s: int) -> None:
        """Every change since the cache's resourceVersion, from one watch that ends at the server's first
        bookmark (kube-apiserver sends one 2 s before a watch's timeout, once it has sent every change before
        it) or at that timeout; a list instead when the watch is refused (410 Gone: the history compacted) or
        cut. A list refused too leaves the collection listed on every read, as the server answers."""
        self.settle(self.listen(timeout_s))

    def listen(self, timeout_s: int) -> list[dict]:
        """``catch_up``'s watch, its events kept, not applied (the cache may still be loading): up to the first
        bookmark, or an ERROR event last when the watch was refused or cut."""
        self.stats.watches += 1
        if not self.rv:
            return [{"type": "ERROR", "object": {"code": 410, "message": "no resourceVersion to resume from"}}]
        query = [*self.query, ("watch", "true"), ("allowWatchBookmarks", "true"), ("resourceVersion", self.rv),
                 ("timeoutSeconds", str(timeout_s))]
        handle = self._handle = StreamHandle()
        heard: list[dict] = []
        began = time.monotonic()
        try:
            for event in self.caller.stream(self.path, query, timeout_s + 30, handle):
                heard.append(event)
                if event.get("type") in ("BOOKMARK", "ERROR"):
                    break
        except Exception as exc:  # noqa: BLE001 - a cut stream: the collection is listed instead
            heard.append({"type": "ERROR", "object": {"code": 0, "message": type(exc).__name__}})
        finally:
            handle.close()
            self.stats.bytes_watched += handle.bytes_read
            self.stats.catch_up_seconds = round(time.monotonic() - began, 3)
        return heard

    def seed(self, items: list[dict]) -> None:
        """The objects the cache held at its resourceVersion, loaded after its watch was opened (``listen``)."""
        with self._lock:
            self.items = {_key(o): o for o in items}

    def settle(self, heard: list[dict]) -> None:
        """The changes ``listen`` heard applied in order; a list instead when its watch was refused or cut."""
        refusal = None
        for event in heard:
            refusal = self._take(event)
            if refusal is not None:
                break
        if refusal is None:
            return
        code = int(refusal.get("code") or 0)
        self.stats.relists_after_gone += code == 410
        self.stats.refusals.append(f"HTTP {code}: {str(refusal.get('message') or '')[:120]}")
        r = self._list()
        if not r.ok:
            self.stats.listing_only = f"the list after a refused catch-up answered HTTP {r.status}"

    def _take(self, event: dict) -> dict | None:
        kind, obj = event.get("type"), event.get("object") or {}
        if kind == "ERROR":
            return obj
        rv = str((obj.get("metadata") or {}).get("resourceVersion") or "")
        if kind == "BOOKMARK":
            self.stats.bookmarks += 1
            self.rv = rv or self.rv
            return None
        received = self.clock()
        self.stats.events += 1
        with self._lock:
            if kind == "DELETED":
                self.items.pop(_key(obj), None)
            else:
                self.items[_key(obj)] = obj
            self.rv = rv or self.rv
        self._tell([(str(kind), obj)], received)
        return None


@dataclass
class WatchingCaller:
    """A ``KubeCaller`` whose lists of the watched collections come from watches (see the module docstring);
    every other request goes to ``caller`` as asked. ``on_change(path)`` gives the collection's change
    handler (or None). ``close`` ends every watch."""

    caller: Streamer
    on_change: Callable[[str], OnChange | None] = lambda path: None
    clock: Callable[[], datetime] = utcnow
    collections: dict[tuple, Collection] = field(default_factory=dict)

    @property
    def context(self) -> str:
        return self.caller.context

    @property
    def endpoint(self) -> str:
        return str(getattr(self.caller, "endpoint", ""))

    def call(self, method: str, path: str, *, query: dict | list | None = None, body: Any = None,
             content_type: str | None = None, timeout: float | None = None) -> Response:
        params = sorted((str(k), str(v)) for k, v in (query.items() if isinstance(query, dict) else query or []))
        info = request_info(method, path, params)
        if info.verb != "list" or info.resource not in WATCHED or info.subresource \
                or any(k in ("watch", "resourceVersion", "limit", "continue") for k, _ in params):
            return self.caller.call(method, path, query=query, body=body, content_type=content_type,
                                    timeout=timeout)
        key = (path, tuple(params))
        if key not in self.collections:
            c = Collection(self.caller, path, params, self.on_change(path), self.clock)
            self.collections[key] = c
            return c.start()
        return self.collections[key].answer()

    def close(self) -> None:
        for c in self.collections.values():
            c.stop()

    def stats(self) -> list[dict]:
        return [c.stats.to_dict() for c in self.collections.values()]


def watching(caller: KubeCaller, on_change: Callable[[str], OnChange | None] = lambda path: None) -> KubeCaller:
    """``caller`` reading by watch when it can open streams, else ``caller`` itself (a client without
    streams, such as a test's, is listed as before)."""
    return WatchingCaller(caller, on_change) if callable(getattr(caller, "stream", None)) else caller  # type: ignore[arg-type]
