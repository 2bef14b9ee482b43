"""``make compare``'s candidates side by side: each ``gpupoc demo --platform NAME`` in a process of its own,
started one after another's Airflow is up and then running together, each with its own state directory ``var/compare/NAME`` (simulated cluster, monitoring stack,
Airflow and pid file), its own evidence root (``<evidence_root>/NAME``, the platform choice's) and Airflow port.

One Airflow for all candidates would not run them side by side: the class DAGs run one at a time
(``max_active_runs=1``) and every class of one ``gpu_group`` takes the same one-slot lease pool, named when the
DAG is parsed (``gpupoc.dags.factory``), so two candidates' classes would wait for each other's leases.

Each candidate's output is printed line by line behind its name and kept in ``var/compare/NAME/demo/demo.log``.
The candidates' processes are recorded in ``var/demo/pids.json`` while they run; ``gpupoc down`` stops them and
everything recorded under ``var/compare/*/demo/pids.json``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from gpupoc.demo.pids import PidFile
from gpupoc.demo.services import COMPARE_PREFIX as ENTRY_PREFIX, DemoPaths, stop_everything

COMPARE_DIR = "compare"
FIRST_PORT = 8080  # candidate i asks for FIRST_PORT + i (any free port when taken)


def candidates_root(paths: DemoPaths) -> Path:
    return paths.var / COMPARE_DIR


@dataclass(frozen=True)
class Candidate:
    """One platform of the plan, run by its own ``gpupoc demo`` under ``var_dir``."""

    name: str
    var_dir: Path
    faults: str = ""
    port: int = 0
    cluster: str = "sim"  # kwok: on the real control plane (``gpupoc.compare.routing``)

    def command(self, plan: Path, classes: tuple[str, ...], timeout: float) -> list[str]:
        cmd = [sys.executable, "-m", "gpupoc.cli", "demo", "--platform", self.name, "--plan", str(plan),
               "--var-dir", str(self.var_dir), "--port", str(self.port), "--timeout", str(timeout), "--no-report",
               "--classes", ",".join(c.removeprefix("poc_") for c in classes)]
        cmd += ["--cluster", self.cluster] if self.cluster != "sim" else []
        return cmd + (["--faults", self.faults] if self.faults else [])

    @property
    def log(self) -> Path:
        return self.var_dir / "demo" / "demo.log"

    @property
    def result(self) -> Path:
        return self.var_dir / "demo" / "result.json"

    @property
    def plan(self) -> Path:
        return self.var_dir / "demo" / "plan.yaml"


def candidates_for(paths: DemoPaths, platforms: tuple[str, ...], planted: dict[str, str],
                   clusters: dict[str, str] | None = None) -> list[Candidate]:
    """One candidate per platform; ``clusters``: name -> sim | kwok (default sim)."""
    root = candidates_root(paths)
    return [Candidate(n, root / n, planted.get(n, ""), FIRST_PORT + i, (clusters or {}).get(n, "sim"))
            for i, n in enumerate(platforms)]


@dataclass
class Finished:
    """How one candidate's demo ended: its exit code, its time, its ``result.json`` (empty when it wrote none)."""

    name: str
    returncode: int
    wall_seconds: float
    result: dict = field(default_factory=dict)

    @property
    def ok(self) -> bool:
        return self.returncode == 0 and bool(self.result)


class Prefixer:
    """Prints each line of a candidate's output behind its name (one line at a time across threads) and keeps
    it in the candidate's log."""

    def __init__(self, width: int, out: Callable[[str], None]):
        self.width, self.out = width, out
        self.lock = threading.Lock()

    def line(self, name: str, text: str) -> str:
        return f"{name:<{self.width}} | {text}"

    def pump(self, name: str, stream, log: Path) -> None:
        log.parent.mkdir(parents=True, exist_ok=True)
        with log.open("w", encoding="utf-8") as keep:
            for raw in stream:
                text = raw.rstrip("\n")
                keep.write(text + "\n")
                keep.flush()
                with self.lock:
                    self.out(self.line(name, text))


def _start(c: Candidate, plan: Path, classes: tuple[str, ...], timeout: float, repo: Path,
           prefixer: Prefixer, table: PidFile) -> tuple[subprocess.Popen, threading.Thread]:
    import os

    c.result.unlink(missing_ok=True)  # an earlier compare's result must not stand for this run's
    proc = subprocess.Popen(c.command(plan, classes, timeout), cwd=str(repo), stdin=subprocess.DEVNULL,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, bufsize=1,
                            env={**os.environ, "PYTHONUNBUFFERED": "1"})
    table.record(ENTRY_PREFIX + c.name, proc.pid, f"--platform {c.name}", group=False)
    pump = threading.Thread(target=prefixer.pump, args=(c.name, proc.stdout, c.log), daemon=True)
    pump.start()
    return proc, pump


def airflow_started(c: Candidate) -> bool:
    """Whether the candidate's demo has its Airflow up (recorded in its pid file once it answers)."""
    table = PidFile.load(c.var_dir / "demo" / "pids.json")
    return bool(table.meta.get("airflow_plan")) and any(n.startswith("airflow-") for n in table.entries)


def run_candidates(cands: list[Candidate], plan: Path, classes: tuple[str, ...], timeout: float, paths: DemoPaths,
                   jobs: int = 0, out: Callable[[str], None] = print, poll: float = 1.0,
                   started: Callable[[Candidate], bool] = airflow_started) -> dict[str, Finished]:
    """Run every candidate's demo, at most ``jobs`` at once (0: all); returns name -> how it ended.

    The next candidate starts once the previous one's Airflow is up (``started``) or its demo ended: four
    Airflows migrating their databases and parsing their DAGs at once on two cores let API calls time out."""
    prefixer = Prefixer(max(len(c.name) for c in cands), out)
    table = PidFile.load(paths.pids)
    waiting, running, done = list(cands), {}, {}
    limit = jobs if jobs > 0 else len(cands)
    last: Candidate | None = None
    try:
        while waiting or running:
            if waiting and len(running) < limit and (last is None or last.name not in running or started(last)):
                last = waiting.pop(0)
                running[last.name] = (last, *_start(last, plan, classes, timeout, paths.repo, prefixer, table),
                                      time.monotonic())
                continue
            for name, (c, proc, pump, t) in list(running.items()):
                if proc.poll() is None:
                    continue
                pump.join(timeout=5)
                done[name] = Finished(name, proc.returncode, time.monotonic() - t, _read_result(c.result))
                table.forget(ENTRY_PREFIX + name)
                del running[name]
            if running:
                time.sleep(poll)
    finally:
        for c, proc, _pump, _t in running.values():  # interrupted: the demos stop; their services keep running
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                continue  # still recorded: `make down` stops it
            table.forget(ENTRY_PREFIX + c.name)
    return {c.name: done[c.name] for c in cands if c.name in done}


def _read_result(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}


def stop_with_candidates(paths: DemoPaths) -> dict[str, str]:
    """``gpupoc down``: the demo's processes (a compare's candidate demos first), then every candidate's."""
    result = stop_everything(paths)
    for pids in sorted(candidates_root(paths).glob("*/demo/pids.json")):
        var = pids.parent.parent
        for name, outcome in stop_everything(DemoPaths(paths.repo, var)).items():
            result[f"{var.name}/{name}"] = outcome
    return result
