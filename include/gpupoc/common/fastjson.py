"""JSON on the hot paths (the simulated API server's answers, watch events and audit lines; the pipeline's
clients reading lists of thousands of pods): orjson, some six times faster than the standard library on a list
of pods, and the standard library for what orjson refuses (the same JSON either way, compact)."""

from __future__ import annotations

import copy as _copy
import json
from typing import Any

import orjson

_OPTIONS = orjson.OPT_NON_STR_KEYS  # as json.dumps: a non-string key is written as a string


def dumps(obj: Any) -> bytes:
    """``obj`` as compact JSON bytes."""
    try:
        return orjson.dumps(obj, option=_OPTIONS)
    except TypeError:  # e.g. an integer beyond 64 bits
        return json.dumps(obj, separators=(",", ":")).encode()


# a datetime, a subclass of str or int (an enum) or a dataclass is refused, so it is copied as it is, not as text
_COPY_OPTIONS = (orjson.OPT_PASSTHROUGH_DATETIME | orjson.OPT_PASSTHROUGH_SUBCLASS
                 | orjson.OPT_PASSTHROUGH_DATACLASS)


def loads(raw: bytes | str) -> Any:
    """The document ``raw`` holds (raises ``ValueError`` on bad JSON, as the standard library)."""
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:  # e.g. NaN, which Python's json writes and reads
        return json.loads(raw)


def looks_like_document(text: str) -> bool:
    """Whether an answer's text is a JSON object or array, from its first characters only (a list of 10,000
    pods is tens of megabytes)."""
    return text[:256].lstrip()[:1] in ("{", "[")


def copy(obj: Any) -> Any:
    """A deep copy of a JSON document (dicts, lists, strings, numbers): a round trip through orjson, some three
    times faster than copying it key by key; anything else (what orjson refuses) through ``copy.deepcopy``.
    A tuple comes back a list and a NaN as None, as a client would read them."""
    try:
        return orjson.loads(orjson.dumps(obj, option=_COPY_OPTIONS))
    except TypeError:
        return _copy.deepcopy(obj)
