"""make compare's candidates side by side: each its own demo process and state directory, output behind its
name, at most ``jobs`` at once, and ``gpupoc down`` stopping what every candidate started."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from gpupoc.common.processes import cmdline, pid_alive
from gpupoc.demo import candidates as C
from gpupoc.demo.pids import PidFile
from gpupoc.demo.runner import CLASS_DAGS
from gpupoc.demo.services import DemoPaths
from tests.waiting import wait_for

# A stand-in for `gpupoc demo`: says it started, waits (at most ``bound`` s) until every other candidate named
# in ``others`` has started too, then writes its result.json; exit 3 when it never saw them.
FAKE = """
import json, pathlib, sys, time
name, var, others, bound = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3].split(","), float(sys.argv[4])
(var / "started").parent.mkdir(parents=True, exist_ok=True)
(var / "started").write_text(name)
print(f"{name} up", flush=True)
deadline = time.monotonic() + bound
while not all((var.parent / o / "started").exists() for o in others if o):
    if time.monotonic() > deadline:
        print("alone", flush=True)
        sys.exit(3)
    time.sleep(0.05)
(var / "demo").mkdir(parents=True, exist_ok=True)
(var / "demo" / "result.json").write_text(json.dumps({"runs": {"poc_audit_trail": "success"}}))
print("done", flush=True)
"""


def said_started(c: C.Candidate) -> bool:
    """The stand-in's "my Airflow is up": the file it writes first."""
    return (c.var_dir / "started").exists()


@pytest.fixture
def paths(tmp_path) -> DemoPaths:
    return DemoPaths(tmp_path, tmp_path / "var")


def fake_candidates(monkeypatch, paths: DemoPaths, names: tuple[str, ...], bound: float) -> list[C.Candidate]:
    cands = C.candidates_for(paths, names, {})
    monkeypatch.setattr(C.Candidate, "command", lambda self, plan, classes, timeout: [
        sys.executable, "-c", FAKE, self.name, str(self.var_dir), ",".join(n for n in names if n != self.name),
        str(bound)])
    return cands


def test_each_candidate_has_its_own_state_directory_port_and_planted_faults(paths):
    cands = C.candidates_for(paths, ("kube", "kueue", "volcano", "kai"), {"volcano": "gang-partial"})
    assert [c.var_dir for c in cands] == [paths.var / "compare" / n for n in ("kube", "kueue", "volcano", "kai")]
    assert len({c.port for c in cands}) == 4
    assert {c.name: c.faults for c in cands} == {"kube": "", "kueue": "", "volcano": "gang-partial", "kai": ""}


def test_a_candidates_command_is_the_demo_on_its_platform_without_its_own_report(paths):
    volcano = C.candidates_for(paths, ("kube", "volcano"), {"volcano": "gang-partial"})[1]
    cmd = volcano.command(Path("/p/default.yaml"), CLASS_DAGS[:2], 600.0)
    text = " ".join(cmd)
    assert cmd[1:4] == ["-m", "gpupoc.cli", "demo"]
    assert "--platform volcano" in text and f"--var-dir {volcano.var_dir}" in text and "--no-report" in text
    assert "--classes queue_congestion,tenant_isolation" in text and "--faults gang-partial" in text
    kube = C.candidates_for(paths, ("kube", "volcano"), {"volcano": "gang-partial"})[0]
    assert "--faults" not in kube.command(Path("/p/default.yaml"), CLASS_DAGS, 600.0), "a fault goes to one only"


def test_every_line_is_printed_behind_its_candidates_name_and_kept_in_its_log(tmp_path):
    printed: list[str] = []
    prefixer = C.Prefixer(7, printed.append)
    prefixer.pump("kai", io.StringIO("[ 0:00] starting\nDecision: none\n"), tmp_path / "kai" / "demo.log")
    assert printed == ["kai     | [ 0:00] starting", "kai     | Decision: none"]
    assert (tmp_path / "kai" / "demo.log").read_text() == "[ 0:00] starting\nDecision: none\n"


def test_the_candidates_run_together_and_each_ends_with_its_result(monkeypatch, paths):
    cands = fake_candidates(monkeypatch, paths, ("kube", "kueue", "kai"), bound=120)
    printed: list[str] = []
    ended = C.run_candidates(cands, Path("plan.yaml"), CLASS_DAGS, 60, paths, out=printed.append, poll=0.05,
                             started=said_started)
    assert {n: (e.returncode, e.ok) for n, e in ended.items()} == {n: (0, True) for n in ("kube", "kueue", "kai")}, \
        printed
    assert ended["kai"].result["runs"] == {"poc_audit_trail": "success"}
    assert {ln.split(" | ")[0].strip() for ln in printed} == {"kube", "kueue", "kai"}
    assert not [n for n in PidFile.load(paths.pids).entries if n.startswith("compare-")], \
        "a candidate that ended is no longer recorded"


def test_jobs_one_runs_the_candidates_one_at_a_time(monkeypatch, paths):
    cands = fake_candidates(monkeypatch, paths, ("kube", "kueue"), bound=1)
    ended = C.run_candidates(cands, Path("plan.yaml"), CLASS_DAGS, 60, paths, jobs=1, out=lambda _l: None, poll=0.05,
                             started=said_started)
    assert ended["kube"].returncode == 3 and not ended["kube"].ok, "the first ran alone (its peer had not started)"
    assert ended["kueue"].ok, "the second started after the first ended and found its peer's start"


def test_the_next_candidate_starts_only_once_the_previous_ones_airflow_is_up(monkeypatch, paths):
    cands = fake_candidates(monkeypatch, paths, ("kube", "kueue"), bound=1)
    ended = C.run_candidates(cands, Path("plan.yaml"), CLASS_DAGS, 60, paths, out=lambda _l: None, poll=0.05,
                             started=lambda c: False)
    assert ended["kube"].returncode == 3, "kube never said its Airflow was up: kueue waited until kube ended"
    assert ended["kueue"].ok


def test_a_candidate_counts_as_started_when_its_pid_file_records_its_airflow(paths):
    kai = C.candidates_for(paths, ("kube", "kai"), {})[1]
    assert not C.airflow_started(kai)
    table = PidFile.load(kai.var_dir / "demo" / "pids.json")
    table.record("sim", 1, "sim serve")
    assert not C.airflow_started(kai), "a cluster alone is not an Airflow"
    table.record("airflow-scheduler", 2, "airflow")
    table.meta["airflow_plan"] = str(kai.plan)
    table.save()
    assert C.airflow_started(kai)


def test_an_earlier_result_does_not_stand_for_a_candidate_that_wrote_none(monkeypatch, paths):
    cands = fake_candidates(monkeypatch, paths, ("kube", "kueue"), bound=1)
    stale = cands[0].result
    stale.parent.mkdir(parents=True)
    stale.write_text(json.dumps({"runs": {"poc_audit_trail": "success"}}))
    ended = C.run_candidates(cands, Path("plan.yaml"), CLASS_DAGS, 60, paths, jobs=1, out=lambda _l: None, poll=0.05,
                             started=said_started)
    assert ended["kube"].result == {} and not ended["kube"].ok


def test_down_stops_what_every_candidate_recorded(paths):
    proc = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(120)  # gpupoc-test-candidate-sim"],
                            start_new_session=True)
    try:
        # down signals only a pid whose command line carries its mark: until the child has exec'd it shows ours
        # (milliseconds, seconds on a loaded machine)
        wait_for(f"the candidate's process (pid {proc.pid}) to exec", lambda: cmdline(proc.pid),
                 lambda line: "gpupoc-test-candidate-sim" in line, step_seconds=60, poll=0.01)
        table = PidFile.load(DemoPaths(paths.repo, paths.var / "compare" / "kai").pids)
        table.record("sim", proc.pid, "gpupoc-test-candidate-sim")
        result = C.stop_with_candidates(paths)
        proc.wait(timeout=30)
        assert result.get("kai/sim") == "stopped", result
        assert not pid_alive(proc.pid, "gpupoc-test-candidate-sim")
    finally:
        if proc.poll() is None:
            proc.kill()


def test_a_candidate_routed_to_the_real_control_plane_runs_the_kwok_demo_and_the_others_the_simulated_one(paths):
    cands = C.candidates_for(paths, ("kube", "kueue", "volcano"), {}, {"kube": "kwok", "kueue": "kwok", "volcano": "sim"})
    cmds = {c.name: " ".join(c.command(Path("/p/compare.yaml"), CLASS_DAGS, 600.0)) for c in cands}
    assert "--cluster kwok" in cmds["kube"] and "--cluster kwok" in cmds["kueue"]
    assert "--cluster" not in cmds["volcano"], "a simulated mode runs on the simulated cluster (the default)"
