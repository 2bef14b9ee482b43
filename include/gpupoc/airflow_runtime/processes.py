"""Start and stop the Airflow components as processes, by process id, with a state file.

``up`` migrates the database, starts the components of the settings' topology (``topology.components``:
api-server, scheduler(s), triggerer(s), dag-processor, Celery workers), each in its own session so stopping
one stops its children (executor workers, task processes), waits until the API answers, every component
reports healthy and every Celery worker answers, creates the pipeline's pools and records pids and timings.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path

from gpupoc.airflow_runtime.settings import POOLS, Executor, RuntimeSettings, process_env, write_config
from gpupoc.airflow_runtime.topology import Component, component_alive, components as topology, health_roles, stop_rank
from gpupoc.common.processes import descendants, kill_left, start_ticks
from gpupoc.exceptions import ComponentExited, GpupocError, SourceUnavailable

# The LocalExecutor topology (docker-compose.yaml without profiles): component -> ``airflow`` arguments.
COMPONENTS = {c.name: list(c.args) for c in topology(RuntimeSettings()).values()}


@dataclass
class RuntimeState:
    """What ``up`` started; ``down`` stops exactly these process ids."""

    home: str
    url: str
    executor: str = Executor.LOCAL.value
    pids: dict[str, int] = field(default_factory=dict)
    logs: dict[str, str] = field(default_factory=dict)
    started_at: float = 0.0
    migrate_seconds: float = 0.0
    ready_seconds: float = 0.0
    healthy_seconds: float = 0.0
    restarted: list[str] = field(default_factory=list)  # components started again after exiting at start-up
    started_ticks: dict[str, int] = field(default_factory=dict)  # each pid's start time: a recycled id is not ours

    def save(self, path: Path) -> None:
        path.write_text(json.dumps(asdict(self), indent=2) + "\n", encoding="utf-8")

    @classmethod
    def load(cls, path: Path) -> "RuntimeState | None":
        try:
            return cls(**json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None


def _airflow() -> str:
    return str(Path(sys.executable).parent / "airflow")


def migrate(s: RuntimeSettings, env: dict[str, str]) -> float:
    """``airflow db migrate``; returns its duration. Raises with the tail of its output on failure."""
    t0 = time.monotonic()
    res = subprocess.run([_airflow(), "db", "migrate"], env=env, capture_output=True, text=True, timeout=600)
    if res.returncode != 0:
        raise GpupocError(f"airflow db migrate failed (exit {res.returncode}) under {s.home}:\n"
                          f"{(res.stdout + res.stderr)[-3000:]}")
    return time.monotonic() - t0


def up(s: RuntimeSettings, components: list[str] | None = None, wait_healthy: bool = True,
       timeout: float = 180.0) -> RuntimeState:
    """Start the deployment (idempotent: a running deployment under the same home is left alone)."""
    current = RuntimeState.load(s.state_path)
    if current and any(component_alive(p) for p in current.pids.values()):
        raise GpupocError(f"Airflow is already running under {s.home} (pids {current.pids}); "
                          "run `gpupoc airflow down` first or use another --home")
    available = topology(s)
    names = components or list(available)
    unknown = [n for n in names if n not in available]
    if unknown:
        raise GpupocError(f"components: unknown {unknown} for the {s.executor.value}; expected some of "
                          f"{list(available)}")
    write_config(s)
    env = process_env(s)
    state = RuntimeState(home=str(s.home), url=s.url, executor=s.executor.value, started_at=time.time())
    state.migrate_seconds = migrate(s, env)
    t0 = time.monotonic()
    (s.home / "logs").mkdir(parents=True, exist_ok=True)
    try:
        for name in names:
            state.pids[name] = _start(s, available[name], env)
            _record_start(state, name)
            state.logs[name] = str(_log_path(s, name))
        state.save(s.state_path)
        from gpupoc.airflow_runtime.client import AirflowClient

        client = AirflowClient.for_home(s.home, url=s.url)
        _wait_ready_restarting_once(s, client, state, available, env, timeout)
        state.ready_seconds = time.monotonic() - t0
        for pool, (slots, description) in POOLS.items():
            client.ensure_pool(pool, slots, description, include_deferred=True)
        if wait_healthy:
            client.wait_healthy(health_roles(names), timeout=timeout)
            nodes = [available[n].celery_node for n in names if available[n].celery_node]
            if nodes:
                from gpupoc.airflow_runtime.workers import wait_workers

                wait_workers(s.broker_url, nodes, timeout=timeout)
        state.healthy_seconds = time.monotonic() - t0
        state.save(s.state_path)
    except BaseException:
        down(s.home)
        raise
    return state


def _wait_ready_restarting_once(s: RuntimeSettings, client, state: RuntimeState, available: dict[str, Component],
                                env: dict[str, str], timeout: float) -> None:
    """Until the API answers. A component that exits while the others start (on SQLite, a write that
    waited out the lock of a busy start-up) is started once more; a second exit fails with its log's tail."""
    for attempt in (1, 2):
        try:
            client.wait_ready(timeout=timeout, pids=state.pids)
            return
        except ComponentExited as exc:
            tails = {n: _log_tail(s, n) for n in exc.names}
            if attempt == 2:
                raise ComponentExited(exc.names, tails) from None
            print(f"gpupoc airflow: {', '.join(exc.names)} exited during start-up; starting again once "
                  f"(first exit: {' | '.join(t.splitlines()[-1] for t in tails.values() if t)})", file=sys.stderr)
            for name in exc.names:
                state.pids[name] = _start(s, available[name], env)
                _record_start(state, name)
                state.restarted.append(name)
            state.save(s.state_path)


def _record_start(state: RuntimeState, name: str) -> None:
    ticks = start_ticks(state.pids[name])
    if ticks is not None:
        state.started_ticks[name] = ticks


def _recycled(state: RuntimeState, name: str) -> bool:
    """True when component ``name``'s recorded pid now belongs to another process (it exited and the kernel
    gave its id to a new one): signalling that id, or its process group, would hit someone else's process."""
    recorded = state.started_ticks.get(name)
    now = start_ticks(state.pids.get(name))
    return recorded is not None and now is not None and now != recorded


def _log_tail(s: RuntimeSettings, name: str, lines: int = 25) -> str:
    try:
        return "\n".join(_log_path(s, name).read_text(encoding="utf-8", errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def _log_path(s: RuntimeSettings, name: str) -> Path:
    return s.home / "logs" / f"{name}.out"


def _start(s: RuntimeSettings, component: Component, env: dict[str, str]) -> int:
    """Start one component in its own session, output appended to ``logs/<name>.out``; returns its pid."""
    with _log_path(s, component.name).open("ab") as out:
        proc = subprocess.Popen([_airflow(), *component.args], env=env, stdout=out, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, start_new_session=True, cwd=str(s.repo))
    return proc.pid


def _stop_group(pid: int, sig: int) -> None:
    try:
        os.killpg(pid, sig)  # each component leads its own session: its process group id is its pid
    except ProcessLookupError:
        pass
    except PermissionError:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            pass


def down(home: Path, grace: float = 20.0) -> dict[str, str]:
    """Stop every process ``up`` recorded under ``home`` (SIGTERM, then SIGKILL after ``grace``)."""
    path = Path(home) / "gpupoc-runtime.json"
    state = RuntimeState.load(path)
    if state is None:
        return {}
    result = {}
    names = sorted(state.pids, key=stop_rank)  # schedulers first, the api-server last (topology.STOP_ORDER)
    recycled = {n for n in names if _recycled(state, n)}
    # Airflow's task processes lead their own process groups: no group signal below reaches them
    children = [c for n in names if n not in recycled for c in descendants(state.pids[n])]
    for name in names:
        pid = state.pids[name]
        if name in recycled or not component_alive(pid):
            result[name] = "not running"
            continue
        _stop_group(pid, signal.SIGTERM)
        result[name] = "stopped"
    deadline = time.monotonic() + grace
    for name in names:
        if name in recycled:  # its group is the new owner's: a pid is reused only once no group has it
            continue
        pid = state.pids[name]
        while component_alive(pid) and time.monotonic() < deadline:
            time.sleep(0.2)
        if component_alive(pid):
            _stop_group(pid, signal.SIGKILL)
            result[name] = "killed"
        # also reap leftovers of the group (executor workers, task supervisors)
        _stop_group(pid, signal.SIGKILL)
    kill_left(children)  # the task processes, orphaned once their supervisors are gone
    _reap(state.pids.values())
    path.unlink(missing_ok=True)
    return result


def _reap(pids) -> None:
    for pid in pids:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            pass


def memory(state: RuntimeState) -> dict[str, dict[str, float]]:
    """Resident (RSS) and proportional (PSS) memory in MiB per component, children included."""
    import psutil

    out: dict[str, dict[str, float]] = {}
    for name, pid in state.pids.items():
        rss = pss = 0.0
        count = 0
        try:
            root = psutil.Process(pid)
            for proc in [root, *root.children(recursive=True)]:
                try:
                    info = proc.memory_full_info()
                    rss += info.rss
                    pss += getattr(info, "pss", info.rss)
                    count += 1
                except psutil.Error:
                    continue
        except psutil.Error:
            pass
        out[name] = {"rss_mib": round(rss / 2**20, 1), "pss_mib": round(pss / 2**20, 1), "processes": count}
    return out


def status(home: Path) -> dict:
    """Per component: pid and whether it runs; plus the API's health answer when it is up."""
    state = RuntimeState.load(Path(home) / "gpupoc-runtime.json")
    if state is None:
        return {"running": False, "home": str(home)}
    info: dict = {"running": any(component_alive(p) for p in state.pids.values()), "home": state.home, "url": state.url,
                  "executor": state.executor,
                  "components": {n: {"pid": p, "alive": component_alive(p)} for n, p in state.pids.items()},
                  "startup": {"migrate_seconds": round(state.migrate_seconds, 1),
                              "ready_seconds": round(state.ready_seconds, 1),
                              "healthy_seconds": round(state.healthy_seconds, 1)},
                  "memory": memory(state)}
    try:
        from gpupoc.airflow_runtime.client import AirflowClient

        info["health"] = AirflowClient.for_home(Path(home), url=state.url).health()
    except (SourceUnavailable, GpupocError) as exc:
        info["health"] = {"error": str(exc)}
    return info


# ---- one component at a time (crash and restart drills) ----
def kill_component(home: Path, name: str, sig: int = signal.SIGKILL, timeout: float = 20.0) -> int:
    """Send ``sig`` to the whole process group of component ``name`` (its executor workers and task processes
    too, as when its container dies) and wait until its leader is gone; returns the pid it had."""
    from gpupoc.airflow_runtime.settings import STATE_FILE

    path = Path(home) / STATE_FILE
    state = RuntimeState.load(path)
    if state is None or name not in state.pids:
        raise GpupocError(f"{home}: no component {name!r} recorded as running; known: "
                          f"{sorted(state.pids) if state else []}; start Airflow with `gpupoc airflow up`")
    pid = state.pids[name]
    if _recycled(state, name):
        raise GpupocError(f"component {name} (pid {pid}) exited earlier and its pid now belongs to another "
                          "process; nothing was signalled. Start it again with `gpupoc airflow up`")
    _stop_group(pid, sig)
    deadline = time.monotonic() + timeout
    while component_alive(pid) and time.monotonic() < deadline:
        time.sleep(0.1)
    _reap([pid])
    if component_alive(pid):
        raise GpupocError(f"component {name} (pid {pid}) still alive {timeout:.0f} s after signal {sig}")
    return pid


def start_component(s: RuntimeSettings, name: str) -> int:
    """Start component ``name`` again with the configuration already written by ``up`` (no rewrite, no
    migration); records its new pid so ``down`` stops it. Returns the new pid."""
    available = topology(s)
    if name not in available:
        raise GpupocError(f"component: expected one of {sorted(available)}, got {name!r}")
    state = RuntimeState.load(s.state_path)
    if state is None:
        raise GpupocError(f"{s.home}: no running Airflow recorded; run `gpupoc airflow up` first")
    if name in state.pids and component_alive(state.pids[name]):
        raise GpupocError(f"component {name} is still running (pid {state.pids[name]}); kill it first")
    pid = _start(s, available[name], process_env(s))
    state.pids[name] = pid
    _record_start(state, name)
    state.logs[name] = str(_log_path(s, name))
    state.save(s.state_path)
    return pid


def restart_component(s: RuntimeSettings, name: str, pause: float = 0.0, sig: int = signal.SIGKILL) -> tuple[int, int]:
    """Kill component ``name`` (``sig`` to its process group), wait ``pause`` seconds, start it again;
    returns (old pid, new pid)."""
    old = kill_component(s.home, name, sig)
    time.sleep(pause)
    return old, start_component(s, name)
