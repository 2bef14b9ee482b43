"""The observer's watched lists handed on: what its watch cache held at its end, saved, and resumed by a later
task from the saved resourceVersion instead of listed again.

At 10,000 pods a list of the wave's pods is some 50 MB and its namespaces' events as much; the observer already
holds both. It saves each watched collection (its request, resourceVersion and objects, ``SavedCollection``);
``resume`` loads them and catches each up by one watch from its resourceVersion (``Collection.catch_up``: the
changes since, then the server's bookmark), so the cluster is not listed again unless its history was
compacted (410 Gone). ``ResumedLists`` answers those lists from the caught-up collections and passes every other
request to the server.
"""

from __future__ import annotations

import logging
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Iterator

from gpupoc.pipeline.k8s import Response, request_info
from gpupoc.pipeline.watch_cache import Collection, Streamer, WatchingCaller

log = logging.getLogger(__name__)

# a resumed collection's one watch asks this timeout: kube-apiserver's bookmark comes 2 s before it (its
# bookmark timer ticks each second), so 1 to 2 s after the request; without one the watch ends at the timeout
CATCH_UP_SECONDS = 3
# below this many pods listing again is cheaper than waiting for the server's bookmark
RESUME_FROM_PODS = 1000


@dataclass(frozen=True)
class SavedCollection:
    """One watched list as a watch cache left it: its request, its resourceVersion and its objects."""

    path: str
    query: tuple[tuple[str, str], ...]
    rv: str
    items: list[dict]

    def header(self) -> dict:
        """Its request and resourceVersion, without its objects (``saved_records`` writes them one by one)."""
        return {"path": self.path, "query": [list(q) for q in self.query], "rv": self.rv}

    @classmethod
    def from_dict(cls, d: dict) -> "SavedCollection":
        return cls(str(d["path"]), tuple((str(k), str(v)) for k, v in d.get("query") or []), str(d.get("rv") or ""),
                   list(d.get("items") or []))


# a saved file is one list: each collection's header (this key: its request and resourceVersion), then its
# objects one by one, so each is scrubbed and written alone (a namespace's events are 100 MB at 10,000 pods)
HEADER = "gpupoc.io/collection"


def saved_records(saved: Iterable[SavedCollection]) -> Iterator[dict]:
    """``saved`` as the records of one list: a header per collection, then its objects."""
    for s in saved:
        yield {HEADER: s.header()}
        yield from s.items


def from_records(records: Iterable[dict]) -> list[SavedCollection]:
    """The collections ``saved_records`` wrote."""
    out: list[SavedCollection] = []
    for r in records:
        head = r.get(HEADER) if isinstance(r, dict) else None
        if head is not None:
            out.append(SavedCollection.from_dict({**head, "items": []}))
        elif out:
            out[-1].items.append(r)
    return out


def saved_collections(caller: WatchingCaller, resources: Iterable[str]) -> Iterator[SavedCollection]:
    """The watched lists of ``resources`` (``pods``, ``events`` ...) that ``caller`` holds, one at a time."""
    wanted = set(resources)
    for (path, params), c in caller.collections.items():
        if c.stats.listing_only or request_info("GET", path, list(params)).resource not in wanted:
            continue
        items, rv = c.held()
        yield SavedCollection(path, tuple(params), rv, items)


def is_pod_list(saved: SavedCollection) -> bool:
    return request_info("GET", saved.path, list(saved.query)).resource == "pods"


def pods_held(saved: Iterable[SavedCollection]) -> int:
    """How many pods the saved pod lists hold."""
    return sum(len(s.items) for s in saved if is_pod_list(s))


@dataclass
class ResumedLists:
    """A ``KubeCaller`` answering the resumed lists from their collections, every other request from ``caller``."""

    caller: Streamer
    collections: dict[tuple, Collection]

    @property
    def context(self) -> str:
        return self.caller.context

    def call(self, method: str, path: str, *, query: dict | list | None = None, body: Any = None,
             content_type: str | None = None, timeout: float | None = None) -> Response:
        params = tuple(sorted((str(k), str(v)) for k, v in (query.items() if isinstance(query, dict)
                                                            else query or [])))
        c = self.collections.get((path, params)) if method == "GET" else None
        if c is not None:
            return c.answer()
        return self.caller.call(method, path, query=query, body=body, content_type=content_type, timeout=timeout)

    def stats(self) -> list[dict]:
        return [c.stats.to_dict() for c in self.collections.values()]


def resume(caller: Streamer, saved: Iterable[SavedCollection], timeout_s: int = CATCH_UP_SECONDS,
           load: Callable[[int], list[dict] | None] | None = None,
           meanwhile: Callable[[], None] = lambda: None) -> ResumedLists:
    """The saved lists caught up with the cluster, each by its own watch, all at once. With ``load``, the saved
    collections come without their objects and ``load(i)`` reads the i-th one's while the watches wait for the
    server's bookmark (None: they could not be read, the collection is listed again); what a watch heard
    meanwhile is applied after. ``meanwhile()`` is the caller's own work done while they still wait."""
    collections: dict[tuple, Collection] = {}
    for s in saved:
        collections[(s.path, s.query)] = Collection.seeded(caller, s.path, list(s.query), s.rv, s.items)
    if collections:
        waiting = list(collections.values())
        with ThreadPoolExecutor(max_workers=min(8, len(waiting)), thread_name_prefix="catch-up") as pool:
            heard = [pool.submit(c.listen, timeout_s) for c in waiting]
            began = time.monotonic()
            unread = {i for i, c in enumerate(waiting) if load is not None and not _seeded(c, load(i))}
            log.info("the saved lists loaded in %.2f s while their watches waited", time.monotonic() - began)
            meanwhile()
            for i, (c, events) in enumerate(zip(waiting, heard)):
                c.settle(UNREAD if i in unread else events.result())
    return ResumedLists(caller, collections)


# what a collection whose saved objects could not be read settles with: a list
UNREAD = [{"type": "ERROR", "object": {"code": 0, "message": "the saved objects could not be read"}}]


def _seeded(c: Collection, items: list[dict] | None) -> bool:
    if items is None:
        return False
    c.seed(items)
    return True
