import json
import os
import subprocess
import sys

import pytest

from gpupoc.common.processes import pid_alive as is_alive
from gpupoc.demo.pids import PidFile, ProcessEntry, stop, stop_all
from tests.waiting import first_truthy

# A process that leads its own session and has a child: like `gpupoc sim serve` and its workload processes.
PARENT = ("import subprocess, sys, time; "
          "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)  # gpupoc-test-child']); "
          "print(c.pid, flush=True); time.sleep(120)  # gpupoc-test-parent")


@pytest.fixture
def family():
    proc = subprocess.Popen([sys.executable, "-c", PARENT], stdout=subprocess.PIPE, text=True,
                            start_new_session=True)
    child = int(proc.stdout.readline())
    yield proc, child
    for pid in (proc.pid, child):
        try:
            os.kill(pid, 9)
        except ProcessLookupError:
            pass
    proc.wait(timeout=10)


def test_the_table_is_written_at_once_and_read_back(tmp_path):
    t = PidFile.load(tmp_path / "demo" / "pids.json")
    assert t.entries == {}
    t.record("sim", 4242, "sim serve")
    t.meta["faults"] = "cross-tenant-logs"
    t.save()
    raw = json.loads((tmp_path / "demo" / "pids.json").read_text())
    assert raw["processes"]["sim"]["pid"] == 4242 and raw["processes"]["sim"]["mark"] == "sim serve"
    back = PidFile.load(tmp_path / "demo" / "pids.json")
    assert back.entries["sim"].pid == 4242 and back.entries["sim"].group is True
    assert back.meta == {"faults": "cross-tenant-logs"}


def test_an_unreadable_table_is_empty_and_bad_rows_are_skipped(tmp_path):
    p = tmp_path / "pids.json"
    p.write_text("{not json")
    assert PidFile.load(p).entries == {}
    p.write_text(json.dumps({"processes": {"a": {"pid": "x"}, "b": {"pid": 7, "mark": "m"}}}))
    assert list(PidFile.load(p).entries) == ["b"]


def test_alive_needs_the_mark_in_the_command_line(family):
    proc, _ = family
    assert is_alive(proc.pid, "gpupoc-test-parent")
    assert not is_alive(proc.pid, "prometheus"), "a reused pid running something else is not ours"
    assert not is_alive(0, "")


def test_stop_ends_the_leader_and_its_whole_group(family):
    proc, child = family
    entry = ProcessEntry("fam", proc.pid, "gpupoc-test-parent", group=True)
    assert stop(entry, grace=5) in ("stopped", "killed")
    proc.wait(timeout=5)
    # it dies at once; a loaded machine may take seconds
    first_truthy("the leader's child to go with the group", lambda: not is_alive(child, "gpupoc-test-child"),
                 step_seconds=60, poll=0.05)


def test_a_pid_whose_mark_does_not_match_is_never_signalled(family):
    proc, _ = family
    assert stop(ProcessEntry("x", proc.pid, "not-this-process"), grace=1) == "not running"
    assert proc.poll() is None and is_alive(proc.pid, "gpupoc-test-parent")


def test_stop_all_stops_every_entry_and_empties_the_table(tmp_path, family):
    proc, _ = family
    t = PidFile.load(tmp_path / "pids.json")
    t.record("fam", proc.pid, "gpupoc-test-parent")
    t.record("gone", 999999, "nothing")
    result = stop_all(t, order=["gone"], grace=5)
    assert result == {"gone": "not running", "fam": result["fam"]} and result["fam"] in ("stopped", "killed")
    assert list(result) == ["gone", "fam"], "the given order first"
    assert PidFile.load(tmp_path / "pids.json").entries == {}


def test_stop_also_ends_a_child_that_left_the_group_for_its_own_session():
    code = ("import subprocess, sys, time; "
            "c = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(120)  # gpupoc-test-own-session'], "
            "start_new_session=True); print(c.pid, flush=True); time.sleep(120)  # gpupoc-test-leader")
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, start_new_session=True)
    child = int(proc.stdout.readline())
    try:
        assert os.getpgid(child) != proc.pid, "the child is out of the leader's group"
        stop(ProcessEntry("leader", proc.pid, "gpupoc-test-leader"), grace=5)
        # it dies at once; a loaded machine may take seconds
        first_truthy("the child in its own session to end", lambda: not is_alive(child, "gpupoc-test-own-session"),
                     step_seconds=60, poll=0.05)
    finally:
        for pid in (proc.pid, child):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        proc.wait(timeout=10)
