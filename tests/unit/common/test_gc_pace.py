"""The harness's task processes collect cycles far less often while they build and keep a wave's data, and a
forking process freezes what it loaded for its children. Each case runs in a Python of its own: the collector's
thresholds are the whole process's."""

from __future__ import annotations

import json
import subprocess
import sys

BUILD_AND_COUNT = '''
import gc, json, sys
from gpupoc.common import gc_pace
if sys.argv[1] == "paced":
    gc_pace.pace_for_large_data()
gc.collect()
runs = []
gc.callbacks.append(lambda phase, info: phase == "start" and runs.append(info["generation"]))
kept = [{"metadata": {"name": f"p{i}", "labels": {"a": "b"}}, "status": {"conditions": [{"type": "Ready"}]}}
        for i in range(100_000)]  # a wave's pods, kept as a task keeps them
print(json.dumps({"young": runs.count(0), "all": len(runs), "thresholds": gc.get_threshold()}))
'''

FREEZE = '''
import gc, json
import gpupoc.plan  # what a forking process loads for its children
from gpupoc.common.gc_pace import freeze_before_fork
frozen = freeze_before_fork()
print(json.dumps({"frozen": frozen, "still_walked": len(gc.get_objects())}))
'''


def _run(code: str, *args: str) -> dict:
    out = subprocess.run([sys.executable, "-c", code, *args], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def test_a_paced_process_collects_a_hundredth_as_often_while_it_builds_a_wave_s_data():
    default, paced = _run(BUILD_AND_COUNT, "default"), _run(BUILD_AND_COUNT, "paced")
    assert paced["thresholds"] == [50_000, 20, 100]
    assert default["young"] >= 500, default  # 400,000 containers at one young collection per 700
    assert paced["all"] <= default["all"] / 50, (paced, default)


def test_a_forking_process_freezes_what_it_loaded_so_its_children_never_walk_it():
    result = _run(FREEZE)
    assert result["frozen"] > 10_000, "the plan's modules alone are tens of thousands of objects"
    assert result["still_walked"] < result["frozen"] / 10, result


def test_a_working_set_let_go_at_exit_stays_until_the_next_one_is_handed_over():
    import weakref

    from gpupoc.common.gc_pace import let_go_at_exit

    class Pods:
        pass

    first, second = Pods(), Pods()
    kept = weakref.ref(first)
    let_go_at_exit(first, [1, 2])
    del first
    assert kept() is not None, "the step's working set was freed as it returned"
    let_go_at_exit(second)
    assert kept() is None, "an earlier working set is kept beside the next one"
    let_go_at_exit()
