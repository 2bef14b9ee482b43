"""A component that exits while the deployment starts is started once more; a second exit names it and shows
its log (real child processes: ``airflow version`` exits at once, as a crashed component would)."""

from __future__ import annotations

import os
from importlib.metadata import version

import pytest

from gpupoc.airflow_runtime.client import AirflowClient
from gpupoc.airflow_runtime.processes import RuntimeState, _start, _wait_ready_restarting_once
from gpupoc.airflow_runtime.settings import RuntimeSettings, free_port, process_env
from gpupoc.airflow_runtime.topology import Component, Role
from gpupoc.exceptions import ComponentExited


@pytest.mark.timeout(300)
def test_a_component_exiting_twice_at_start_up_fails_with_its_log_after_one_restart(tmp_path):
    s = RuntimeSettings(home=tmp_path / "af", port=free_port())
    (s.home / "logs").mkdir(parents=True)
    env = process_env(s)
    quitter = Component(name="dag-processor", role=Role.DAG_PROCESSOR, args=("version",))
    state = RuntimeState(home=str(s.home), url=s.url, pids={"dag-processor": _start(s, quitter, env)})
    first_pid = state.pids["dag-processor"]
    client = AirflowClient(s.url, "admin", "unused", timeout=1.0)

    with pytest.raises(ComponentExited) as err:
        _wait_ready_restarting_once(s, client, state, {"dag-processor": quitter}, env, timeout=60)

    assert err.value.names == ["dag-processor"]
    assert state.restarted == ["dag-processor"] and state.pids["dag-processor"] != first_pid
    log = (s.home / "logs" / "dag-processor.out").read_text().splitlines()
    assert err.value.log_tails["dag-processor"].splitlines() == log[-25:], "the error carries the log's end"
    assert log.count(version("apache-airflow")) == 2, f"both runs wrote to the component's log: {log!r}"
    assert "logs/dag-processor.out" in str(err.value)
    assert RuntimeState.load(s.state_path).restarted == ["dag-processor"], "the restart is recorded"


def _session_leader() -> "subprocess.Popen":
    """A `sleep` leading its own session, returned once its command line reads as `sleep` (right after exec
    the kernel shows an empty one for a moment, which counts as a component still starting)."""
    import subprocess

    from gpupoc.common.processes import cmdline
    from tests.waiting import wait_for

    proc = subprocess.Popen(["sleep", "60"], start_new_session=True)
    # an exec takes milliseconds, seconds on a loaded machine
    wait_for(f"sleep (pid {proc.pid}) to exec", lambda: cmdline(proc.pid), lambda line: line.startswith("sleep"),
             step_seconds=60, poll=0.01)
    return proc


@pytest.mark.timeout(300)
def test_down_never_signals_a_recorded_pid_the_kernel_gave_to_another_process(tmp_path):
    from gpupoc.airflow_runtime.processes import down
    from gpupoc.common.processes import start_ticks

    stranger, own = _session_leader(), _session_leader()
    try:
        for proc, ticks in ((stranger, start_ticks(stranger.pid) - 1), (own, start_ticks(own.pid))):
            home = tmp_path / str(proc.pid)
            home.mkdir()
            RuntimeState(home=str(home), url="http://127.0.0.1:1", pids={"scheduler": proc.pid},
                         started_ticks={"scheduler": ticks}).save(home / "gpupoc-runtime.json")
            assert down(home, grace=0.5) == {"scheduler": "not running"}  # `sleep` is no Airflow component
        assert stranger.poll() is None, "a recycled pid (other start time): its group is left alone"
        # our own leader's group is reaped (executor leftovers): a `sleep 60` ends within 10 s only when killed.
        # down also waits for what it killed, so Popen may find it reaped already and report 0 instead of -9
        assert own.wait(timeout=10) in (-9, 0), "our own leader's group is reaped (executor leftovers)"
    finally:
        for proc in (stranger, own):
            proc.kill()
            proc.wait()


@pytest.mark.timeout(120)
def test_down_stops_a_component_s_descendant_that_leads_its_own_process_group(tmp_path):
    """Airflow's task processes leave their supervisor's group (``setpgid``): a group signal misses them."""
    import subprocess
    import sys

    import psutil

    from gpupoc.airflow_runtime.processes import down
    from gpupoc.common.processes import start_ticks
    from tests.waiting import wait_for

    own_group = "import os, time; os.setpgid(0, 0); time.sleep(60)"
    leader = subprocess.Popen(["sh", "-c", f"{sys.executable} -c '{own_group}' & wait"], start_new_session=True)
    try:
        task = wait_for("the leader's child in its own group", lambda: psutil.Process(leader.pid).children(),
                        lambda kids: bool(kids) and os.getpgid(kids[0].pid) == kids[0].pid, step_seconds=60,
                        poll=0.05)[0]
        RuntimeState(home=str(tmp_path), url="http://127.0.0.1:1", pids={"scheduler": leader.pid},
                      started_ticks={"scheduler": start_ticks(leader.pid)}).save(tmp_path / "gpupoc-runtime.json")
        down(tmp_path, grace=0.5)
        task.wait(timeout=10)  # psutil.TimeoutExpired: the task process outlived down
    finally:
        leader.kill()
        leader.wait()
