"""A process counts as ours only while it runs and its command line names it."""

from __future__ import annotations

import os
import subprocess
import sys

from gpupoc.common.processes import cmdline, pid_alive, process_running
from tests.waiting import first_truthy, wait_for


def test_pid_alive_checks_the_command_line():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)", "gpupoc-test-mark"])
    try:
        # between fork and exec the child still shows its parent's command line: wait for the exec
        wait_for("the child to exec", lambda: cmdline(child.pid) or "", lambda line: "gpupoc-test-mark" in line,
                 step_seconds=60, poll=0.01)
        assert pid_alive(child.pid, "gpupoc-test-mark")
        assert not pid_alive(child.pid, "prometheus")  # a reused pid is not our Prometheus
    finally:
        child.kill()
        child.wait()
    assert not pid_alive(None, "python") and not pid_alive(-1, "python")


def test_a_zombie_or_a_finished_process_is_not_alive():
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    # until it exits (a zombie until reaped); its state, not its command line, says so: mid-exec the command
    # line reads empty for a moment while the process still runs
    first_truthy("the child to exit", lambda: not process_running(child.pid), step_seconds=60, poll=0.01)
    assert not pid_alive(child.pid, "python")
    child.wait()
    assert not pid_alive(child.pid, "python")


def test_start_ticks_and_running_follow_the_process_through_its_end():
    from gpupoc.common.processes import start_ticks

    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    try:
        ticks = start_ticks(child.pid)
        assert isinstance(ticks, int) and ticks >= start_ticks(os.getpid()), "a child starts after its parent"
        assert process_running(child.pid)
    finally:
        child.kill()
    # a zombie until reaped: no longer running, start time still readable
    first_truthy("the killed child to stop running", lambda: not process_running(child.pid), step_seconds=60,
                 poll=0.01)
    assert start_ticks(child.pid) == ticks, "a zombie keeps its start time"
    child.wait()
    assert start_ticks(child.pid) is None and not process_running(child.pid)
    assert start_ticks(None) is None and not process_running(-1)
