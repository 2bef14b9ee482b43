"""The simulated API server's JSON: the same document as the standard library writes, compact, also for what
orjson refuses (an integer beyond 64 bits) and for non-string keys."""

from __future__ import annotations

import json
import math

import pytest

from gpupoc.common import fastjson


def test_answers_are_the_same_json_as_the_standard_library_writes():
    doc = {"kind": "PodList", "items": [{"metadata": {"name": "p-ü", "labels": {"a": "b"}}, "n": 1.5, "x": None}],
           1: "int key"}
    assert json.loads(fastjson.dumps(doc)) == json.loads(json.dumps(doc))
    assert b" " not in fastjson.dumps({"a": [1, 2]}), "compact, as kube-apiserver answers"


def test_what_orjson_refuses_is_written_by_the_standard_library():
    big = {"resourceVersion": 2**70}
    assert json.loads(fastjson.dumps(big)) == big


def test_a_copy_is_equal_and_shares_nothing_with_the_original():
    pod = {"metadata": {"name": "p", "labels": {"a": "b"}}, "spec": {"schedulingGates": [{"name": "g"}]}, "n": 1.5}
    copied = fastjson.copy(pod)
    assert copied == pod
    copied["metadata"]["labels"]["a"] = "c"
    copied["spec"]["schedulingGates"].clear()
    assert pod["metadata"]["labels"] == {"a": "b"} and pod["spec"]["schedulingGates"] == [{"name": "g"}]


def test_what_is_not_json_is_copied_as_it_is():
    from datetime import datetime, timezone
    from enum import Enum

    class Phase(str, Enum):
        RUNNING = "Running"
    at = datetime(2026, 12, 3, tzinfo=timezone.utc)
    doc = {"at": at, "phase": Phase.RUNNING, "big": 2**70, 1: "int key"}
    copied = fastjson.copy(doc)
    assert copied == doc and copied["at"] is not None and isinstance(copied["at"], datetime)
    assert copied["phase"] is Phase.RUNNING and 1 in copied


def test_what_orjson_refuses_to_read_the_standard_library_reads_and_bad_json_is_a_value_error():
    assert math.isnan(fastjson.loads(b'{"x": NaN}')["x"]), "NaN, as Python's json writes it"
    with pytest.raises(ValueError):
        fastjson.loads(b'{"items": [')


def test_a_document_is_told_from_its_first_characters():
    assert fastjson.looks_like_document('  \n{"kind": "PodList"}') and fastjson.looks_like_document("[1]")
    assert not fastjson.looks_like_document("404 page not found") and not fastjson.looks_like_document("")
