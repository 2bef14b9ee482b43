"""The simulated API server's JSON: the same document as the standard library writes, compact, also for what
orjson refuses (an integer beyond 64 bits) and for non-string keys."""

from __future__ import annotations

import json

from gpupoc.sim import fastjson


def test_answers_are_the_same_json_as_the_standard_library_writes():
    doc = {"kind": "PodList", "items": [{"metadata": {"name": "p-ü", "labels": {"a": "b"}}, "n": 1.5, "x": None}],
           1: "int key"}
    assert json.loads(fastjson.dumps(doc)) == json.loads(json.dumps(doc))
    assert b" " not in fastjson.dumps({"a": [1, 2]}), "compact, as kube-apiserver answers"


def test_what_orjson_refuses_is_written_by_the_standard_library():
    big = {"resourceVersion": 2**70}
    assert json.loads(fastjson.dumps(big)) == big
