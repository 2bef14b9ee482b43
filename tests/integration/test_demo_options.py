"""Every `make demo` option docs/running.md documents starts: the command the Makefile composes for it runs
until its first test class's DAG run is running on a cluster set up as the option asks, then `gpupoc down`
stops it and nothing it started is left running.

Each option runs in a private tree (a copy of plans/, so the plan's ``../var/evidence`` stays there) with its
own var directory, one demo at a time; a demo is stopped as soon as its first class runs.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest
import yaml

from gpupoc.demo.pids import PidFile
from gpupoc.demo.runner import plan_classes
from gpupoc.demo.services import DemoPaths, sim_mode_for, stop_everything
from gpupoc.pipeline.common import repo_root
from tests.waiting import wait_for

pytestmark = [pytest.mark.integration, pytest.mark.xdist_group("demo-options")]
REPO = repo_root()
DOCUMENTED = re.compile(r"^\| `make demo ((?:[A-Z_]+=\S+ ?)+)` \|", re.MULTILINE)
RUNNING = re.compile(r"^\[\s*[\d:]+\] (poc_\w+)\s+running\s", re.MULTILINE)
DEMO_VARIABLES = ("FAULTS", "BEHAVIOUR", "BEHAVIOUR_SEED", "CLASSES", "PLAN", "FROM_MANIFESTS", "CLUSTER")
# One silent step of a demo on a loaded machine: Airflow's start (migrations, four components) is the longest.
STEP_SECONDS = 600.0


def documented_options() -> list[str]:
    """``FAULTS=cross-tenant-logs``, ... : the option column of docs/running.md's `make demo` table."""
    return [m.group(1).strip() for m in DOCUMENTED.finditer((REPO / "docs" / "running.md").read_text())]


def make_variables(option: str) -> dict[str, str]:
    return dict(word.split("=", 1) for word in option.split())


def demo_arguments(variables: dict[str, str]) -> list[str]:
    """The arguments of ``gpupoc demo`` that ``make demo`` passes for these variables (``make -n``: nothing
    of the recipe runs)."""
    # a `make test` above passes its flags and variables down (MAKEFLAGS): this make sees only the option's
    env = {k: v for k, v in os.environ.items() if k not in {"MAKEFLAGS", "MFLAGS", "MAKELEVEL", *DEMO_VARIABLES}}
    made = subprocess.run(["make", "-n", "demo", *(f"{k}={v}" for k, v in variables.items())], cwd=REPO,
                          capture_output=True, text=True, check=True, env=env).stdout
    for line in made.splitlines():
        words = shlex.split(line)
        if len(words) > 1 and words[0].endswith("/gpupoc") and words[1] == "demo":
            return words[2:]
    raise AssertionError(f"make -n demo {variables} runs no `gpupoc demo`:\n{made}")


@dataclass
class Demo:
    """A ``gpupoc demo`` started in its own tree; its output goes to ``log``."""

    root: Path
    proc: subprocess.Popen | None = None

    @property
    def paths(self) -> DemoPaths:
        return DemoPaths(REPO, self.root / "var")

    @property
    def log(self) -> Path:
        return self.root / "demo.out"

    def output(self) -> str:
        return self.log.read_text(encoding="utf-8", errors="replace") if self.log.exists() else ""

    def start(self, args: list[str]) -> None:
        with self.log.open("ab") as out:
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "gpupoc.cli", "demo", *args, "--var-dir", str(self.paths.var),
                 "--port", "0"], cwd=self.root, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                start_new_session=True, env={**os.environ, "PYTHONUNBUFFERED": "1"})

    def interrupt(self) -> int:
        """Ctrl-C, as a user stops it (the services keep running); its exit status."""
        assert self.proc is not None
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        return self.proc.returncode


def processes_naming(text: str) -> list[str]:
    """Processes of this machine whose command line or environment names ``text`` (the demo's tree)."""
    found, needle = [], text.encode()
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit() or int(proc.name) == os.getpid():
            continue
        try:
            cmdline = (proc / "cmdline").read_bytes()
            environ = (proc / "environ").read_bytes()
        except OSError:  # gone, or another user's
            continue
        if needle in cmdline or needle in environ:
            command = cmdline.replace(b"\0", b" ").decode(errors="replace")
            found.append(f"{proc.name}: {command[:160]}")
    return found


@pytest.fixture
def demo():
    """A private tree with a copy of plans/; whatever the test leaves running is stopped at the end."""
    root = Path(tempfile.mkdtemp(prefix="gpupoc-demo-option-"))
    shutil.copytree(REPO / "plans", root / "plans")
    d = Demo(root)
    yield d
    if d.proc is not None and d.proc.poll() is None:
        os.killpg(d.proc.pid, signal.SIGKILL)
        d.proc.wait()
    stop_everything(d.paths)
    shutil.rmtree(root, ignore_errors=True)


def _first_class_running(d: Demo) -> str:
    def observe() -> str:
        text = d.output()
        if d.proc.poll() is not None and not RUNNING.search(text):
            raise AssertionError(f"the demo exited {d.proc.returncode} before a class ran:\n{text[-3000:]}")
        return text

    text = wait_for("the demo's first class to run", observe, lambda t: bool(RUNNING.search(t)),
                    step_seconds=STEP_SECONDS, poll=2.0, progress=len,
                    describe=lambda t: t.strip().splitlines()[-1] if t.strip() else "no output")
    return RUNNING.search(text).group(1)


def test_the_demo_table_documents_every_option_of_the_makefiles_demo_target():
    options = {name for option in documented_options() for name in make_variables(option)}
    assert options == set(DEMO_VARIABLES), options


@pytest.mark.timeout(1800)
@pytest.mark.parametrize("option", documented_options())
def test_each_documented_demo_option_runs_its_first_class_and_stops_with_nothing_left_running(demo, option):
    variables = make_variables(option)
    args = demo_arguments(variables)
    if "--plan" not in args:  # the default plan, from the copy of plans/
        args += ["--plan", "plans/default.yaml"]
    plan = demo.root / args[args.index("--plan") + 1]
    demo.start(args)
    first = _first_class_running(demo)
    demo_plan = yaml.safe_load(demo.paths.plan.read_text())
    assert first == plan_classes(plan, variables.get("CLASSES"))[0], demo.output()[-3000:]
    if variables.get("CLUSTER") == "kwok":
        _check_real_control_plane(demo, demo_plan)
    else:
        _check_simulated_cluster(demo, demo_plan, plan, variables)
    assert demo_plan["evidence_root"] == str(demo.root / "var" / "evidence"), "the evidence stays in the tree"

    print(f"\n{option}:\n{demo.output()}")
    started = PidFile.load(demo.paths.pids)
    assert {"airflow-scheduler", "monitoring-prometheus"} <= set(started.entries), started.entries
    assert demo.interrupt() == 130, demo.output()[-2000:]
    down = subprocess.run([sys.executable, "-m", "gpupoc.cli", "down", "--var-dir", str(demo.paths.var)],
                          cwd=demo.root, capture_output=True, text=True)
    assert down.returncode == 0, down.stdout + down.stderr
    assert not any(started.alive().values()), f"gpupoc down left running {started.alive()}: {down.stdout}"
    wait_for("every process of the demo's tree to end", lambda: processes_naming(str(demo.root)),
             lambda left: not left, step_seconds=60.0, poll=1.0)


def _check_real_control_plane(demo: Demo, demo_plan: dict) -> None:
    """The plan was given to the real control plane (its preflight passed) and fails KWOK nodes by taint."""
    from gpupoc.demo.kwok import plan_kubeconfig

    preflight = re.search(r"gpupoc preflight: (\d+) of (\d+) passed", demo.output())
    assert preflight and preflight.group(1) == preflight.group(2), demo.output()[-3000:]
    assert "Kubernetes v1.37" in demo.output() and not (demo.paths.sim / "sim.json").exists()
    assert demo_plan["platform"]["kubeconfig"] == str(plan_kubeconfig(demo.paths.var))
    injections = demo_plan["test_classes"]["fault_recovery"]["injections"]
    assert all(i["injector"]["method"] != "sim" for i in injections if i["kind"] == "node_failure"), injections


def _check_simulated_cluster(demo: Demo, demo_plan: dict, plan: Path, variables: dict[str, str]) -> None:
    sim = json.loads((demo.paths.sim / "sim.json").read_text())  # the cluster, while it runs
    assert sim["mode"] == sim_mode_for(plan), sim
    assert sim["faults"] == sorted(filter(None, variables.get("FAULTS", "").split(","))), sim
    assert sim["behaviours"] == sorted(filter(None, variables.get("BEHAVIOUR", "").split(","))), sim
    assert sim["behaviour_seed"] == int(variables.get("BEHAVIOUR_SEED", 0)), sim
    if variables.get("FROM_MANIFESTS"):
        preflight = re.search(r"gpupoc preflight: (\d+) of (\d+) passed", demo.output())
        assert preflight and preflight.group(1) == preflight.group(2), demo.output()[-3000:]
        assert demo_plan["platform"]["kubeconfig"] == str(demo.paths.manifests_kubeconfig)
    else:
        assert demo_plan["platform"]["kubeconfig"] == sim["kubeconfig_http"]

    assert "sim" in PidFile.load(demo.paths.pids).entries
