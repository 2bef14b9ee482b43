"""Start the demo's services and write the plan its DAG runs read.

The simulated cluster is started afresh on every demo (a clean cluster with the chosen fault profiles);
the monitoring stack and Airflow are reused when they already run for the same plan, restarted otherwise.
Every process started is recorded in the demo's pid file before anything waits on it.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Callable

import yaml

from gpupoc.demo.pids import PidFile, stop
from gpupoc.exceptions import ConfigError, GpupocError
from gpupoc.sim.behaviours import parse_behaviours
from gpupoc.sim.faults import parse_faults

SIM_MARK = "sim serve"
AIRFLOW_PREFIX = "airflow-"
STACK_PREFIX = "monitoring-"
COMPARE_PREFIX = "compare-"  # make compare's candidate demos (gpupoc.demo.candidates), stopped first
SIM_START_TIMEOUT = 60.0


@dataclass(frozen=True)
class DemoPaths:
    """Where the demo keeps its state: everything under ``<repo>/var`` (or ``var_dir``, for tests)."""

    repo: Path
    var_dir: Path | None = None

    @property
    def var(self) -> Path:
        return self.var_dir or self.repo / "var"

    @property
    def demo(self) -> Path:
        return self.var / "demo"

    @property
    def pids(self) -> Path:
        return self.demo / "pids.json"

    @property
    def plan(self) -> Path:
        return self.demo / "plan.yaml"

    @property
    def result(self) -> Path:
        return self.demo / "result.json"

    @property
    def sim(self) -> Path:
        return self.var / "sim"

    @property
    def manifests_kubeconfig(self) -> Path:
        """The identities' kubeconfig ``--cluster-from-manifests`` mints (``gpupoc cluster kubeconfig``): in the
        simulated cluster's data directory, beside the cluster's own, so the demo's plan names the simulated
        cluster as the plain demo's does (``gpupoc.plan.platform_kind``) and its ``sim`` injector is accepted,
        while a kubeconfig anywhere else is still refused that injector."""
        return self.sim / "kubeconfig-plan"

    @property
    def monitoring(self) -> Path:
        return self.var / "monitoring"

    @property
    def airflow(self) -> Path:
        return self.var / "airflow"


# The simulated cluster's scheduler mode that serves each adapter of a plan (``platform.adapter``).
SIM_MODE = {"kube-scheduler": "kube", "kueue": "kueue", "volcano": "volcano", "kai": "kai",
            "hami": "hami"}


def _platform_block(plan_file: Path, platform: str = "") -> dict:
    """The plan's ``platform`` block as written (that of its platform ``platform`` when one is chosen)."""
    from gpupoc.plan.platforms import choose

    try:
        data = yaml.safe_load(Path(plan_file).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(str(plan_file), [f"(file): cannot read the plan ({exc}); pass an existing --plan"]) from None
    if platform and isinstance(data, dict):
        data = choose(data, platform, str(plan_file))
    block = data.get("platform") if isinstance(data, dict) else None
    return block if isinstance(block, dict) else {}


def gpus_for(plan_file: Path, platform: str = "") -> str:
    """How the plan's GPUs reach the scheduler (``platform.options.gpus``): ``device-plugin`` or ``dra``."""
    options = _platform_block(plan_file, platform).get("options")
    return str((options if isinstance(options, dict) else {}).get("gpus") or "device-plugin")


def gangs_for(plan_file: Path, platform: str = "") -> str:
    """How the plan groups gangs (``platform.options.gangs``): ``adapter`` or ``workload-api``."""
    options = _platform_block(plan_file, platform).get("options")
    return str((options if isinstance(options, dict) else {}).get("gangs") or "adapter")


def sim_config_for(plan_file: Path, platform: str = "") -> Path | None:
    """The cluster file the plan's ``platform.simulator_config`` names (relative to the plan), else None."""
    value = _platform_block(plan_file, platform).get("simulator_config")
    if not value:
        return None
    path = Path(os.path.expandvars(os.path.expanduser(str(value))))
    path = path if path.is_absolute() else (Path(plan_file).resolve().parent / path)
    if not path.is_file():
        raise ConfigError(str(plan_file), [f"platform.simulator_config: no cluster file at {path}; name an "
                                           "existing `gpupoc sim serve --config` file, relative to the plan"])
    return path


def sim_mode_for(plan_file: Path, platform: str = "") -> str:
    """The scheduler mode (``gpupoc sim serve --mode``) the plan's ``platform.adapter`` needs (that of its
    platform ``platform`` when one is chosen)."""
    adapter = _platform_block(plan_file, platform).get("adapter") or "kube-scheduler"
    if adapter not in SIM_MODE:
        raise ConfigError(str(plan_file), [f"platform.adapter: unknown adapter {adapter!r}; one of "
                                           f"{', '.join(SIM_MODE)}"])
    return SIM_MODE[adapter]


def check_sim_profiles(faults: str = "", behaviours: str = "") -> None:
    """Refuse an unknown fault or behaviour profile (or class) before anything starts, with the parsers
    ``gpupoc sim serve`` reads them with."""
    parse_faults(faults)
    parse_behaviours(behaviours)


def start_sim(paths: DemoPaths, table: PidFile, faults: str = "", config: Path | None = None,
              behaviours: str = "", behaviour_seed: int = 0, mode: str = "", empty: bool = False) -> dict:
    """A fresh ``gpupoc sim serve`` (the previous one of the demo is stopped) in scheduler ``mode`` (its shipped
    cluster, unless ``config``) with the given fault and behaviour profiles; returns its ``sim.json``."""
    old = table.entries.get("sim")
    if old:
        stop(old)
        table.forget("sim")
    paths.sim.mkdir(parents=True, exist_ok=True)
    info_path = paths.sim / "sim.json"
    info_path.unlink(missing_ok=True)
    cmd = [sys.executable, "-m", "gpupoc.cli", "sim", "serve", "--port", "0", "--data-dir", str(paths.sim)]
    if faults:
        cmd += ["--faults", faults]
    if behaviours:
        cmd += ["--behaviour", behaviours, "--behaviour-seed", str(behaviour_seed)]
    if config:
        cmd += ["--config", str(config)]
    if mode:
        cmd += ["--mode", mode]
    if empty:
        cmd += ["--empty"]  # nodes only: the plan's manifests come through the API
    log = paths.sim / "server.log"
    with log.open("ab") as out:
        proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                cwd=str(paths.repo), start_new_session=True,
                                env={**os.environ, "PYTHONUNBUFFERED": "1"})
    table.record("sim", proc.pid, SIM_MARK)
    deadline = time.monotonic() + SIM_START_TIMEOUT
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            table.forget("sim")
            raise GpupocError(f"gpupoc sim serve exited {proc.returncode} during start-up; see {log}:\n"
                              f"{log.read_text(errors='replace')[-2000:]}")
        try:
            info = json.loads(info_path.read_text(encoding="utf-8"))
            if info.get("pid") == proc.pid:
                return info
        except (OSError, ValueError):
            pass
        time.sleep(0.1)
    stop(table.entries["sim"])
    table.forget("sim")
    raise GpupocError(f"gpupoc sim serve wrote no {info_path} within {SIM_START_TIMEOUT:.0f} s; see {log}")


def start_stack(paths: DemoPaths, table: PidFile, metrics_url: str | None = None) -> dict:
    """``gpupoc stack up`` against the running cluster (reused and retargeted when it runs already): its GPU and
    kube-state series from ``metrics_url``, else from the simulated cluster its ``sim.json`` names."""
    from gpupoc.monitoring import stack

    state = stack.up(stack.StackOptions(data_dir=paths.monitoring, sim_json=paths.sim / "sim.json",
                                        metrics_url=metrics_url))
    for name, mark in stack._CMD_MARK.items():  # the marks `stack down` checks too
        table.record(STACK_PREFIX + name, int(state[name]["pid"]), mark)
    return state


# The demo's window starts this long after the demo: the schedule's first run is at least this far away, so
# it never starts beside the demo's own runs (as a demo run across midnight would with a daily schedule).
DEMO_WINDOW_DELAY = timedelta(days=1)


def _shifted_window(window: dict, now: datetime) -> dict:
    """The base plan's window length and schedule, starting a day after ``now``: the demo triggers its own runs,
    and the schedule's runs follow from the window's start, none beside the demo's (each demo moves it on)."""
    try:
        length = (datetime.fromisoformat(str(window["end"])) - datetime.fromisoformat(str(window["start"])))
    except (KeyError, TypeError, ValueError):
        length = timedelta(days=7)
    start = now.replace(microsecond=0) + DEMO_WINDOW_DELAY
    return {**window, "start": start.isoformat(), "end": (start + length).isoformat()}


def _absolute(value: str | None, base: Path) -> str | None:
    if not value:
        return value
    p = Path(os.path.expandvars(os.path.expanduser(str(value))))
    return str(p if p.is_absolute() else (base / p).resolve())


def write_demo_plan(paths: DemoPaths, base_plan: Path, sim: dict, stack_state: dict | None,
                    now: datetime | None = None, kubeconfig: Path | None = None, platform: str = "",
                    cluster: str = "sim", out: Callable[[str], None] = lambda line: None) -> Path:
    """``var/demo/plan.yaml``: the base plan pointed at this demo's cluster and monitoring stack.

    The platform uses the cluster's plain-HTTP kubeconfig (``kubeconfig_http``; kubectl keeps the TLS one),
    relative paths (evidence, report files, a replay's history) become absolute (the file lives elsewhere than
    the base plan), and the window starts a day after the demo. ``platform``: that entry of the plan's
    ``platforms`` chosen.
    ``cluster`` ``kwok``: node failures the ``sim`` injector would provoke use KWOK's (``gpupoc.demo.kwok``).
    """
    base_plan = Path(base_plan).resolve()
    try:
        data = yaml.safe_load(base_plan.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(str(base_plan), [f"(file): cannot read the plan ({exc.strerror}); pass an existing --plan"])
    if not isinstance(data, dict):
        raise ConfigError(str(base_plan), ["(root): expected a mapping (a POC plan)"])
    if platform:
        from gpupoc.plan.platforms import choose

        data = choose(data, platform, str(base_plan))
    base = base_plan.parent
    platform = data.setdefault("platform", {})
    platform["kubeconfig"] = str(kubeconfig) if kubeconfig else (sim.get("kubeconfig_http") or sim["kubeconfig"])
    for key in ("kubernetes_conn_id", "in_cluster"):
        platform.pop(key, None)
    sources = data.setdefault("evidence_sources", {}) or {}
    data["evidence_sources"] = sources
    sources["audit_log_path"] = sim.get("audit_log") or str(paths.sim / "audit.log")
    if stack_state:
        sources["prometheus_url"] = sources.get("prometheus_url") or stack_state["prometheus"]["url"]
        sources["alertmanager_url"] = sources.get("alertmanager_url") or stack_state["alertmanager"]["url"]
        sources["alert_receiver_record"] = (_absolute(sources.get("alert_receiver_record"), base)
                                            or stack_state["receiver"].get("record"))
    data["evidence_root"] = _absolute(data.get("evidence_root") or "../var/evidence", base)
    report = data.setdefault("report", {}) or {}
    data["report"] = report
    for key in ("output_dir", "scorecard"):
        if report.get(key):
            report[key] = _absolute(report[key], base)
    for spec in (data.get("test_classes") or {}).values():  # a replayed class's job history
        replay = spec.get("replay") if isinstance(spec, dict) else None
        if isinstance(replay, dict) and replay.get("file"):
            replay["file"] = _absolute(replay["file"], base)
    changes = _cluster_changes(data, cluster, out)
    data["window"] = _shifted_window(data.get("window") or {}, now or datetime.now(timezone.utc))
    paths.demo.mkdir(parents=True, exist_ok=True)
    what = "the simulated cluster" if cluster == "sim" else "the real control plane (KWOK nodes)"
    header = (f"# Written by `gpupoc demo` from {base_plan}: {what} of this demo "
              f"({sim.get('url')}), absolute paths, the window starting a day after the demo.\n"
              + "".join(f"# changed for this cluster: {c}\n" for c in changes))
    tmp = paths.plan.with_suffix(".yaml.tmp")
    tmp.write_text(header + yaml.safe_dump(data, sort_keys=False, allow_unicode=True), encoding="utf-8")
    os.replace(tmp, paths.plan)
    from gpupoc.plan import load_plan

    load_plan(paths.plan, kubeconfig_later=kubeconfig is not None)  # every problem with its path now
    return paths.plan


def _cluster_changes(data: dict, cluster: str, out: Callable[[str], None]) -> list[str]:
    """What the plan needs changed for the demo's cluster (none on the simulated one), each said once."""
    if cluster != "kwok":
        return []
    from gpupoc.demo.kwok import kwok_injectors

    changes = kwok_injectors(data)
    for change in changes:
        out(f"        plan for KWOK nodes: {change}")
    return changes


def port_free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def airflow_running(home: Path) -> dict | None:
    """The running deployment's state (url, pids) when every component is alive and the API answers."""
    from gpupoc.airflow_runtime.client import AirflowClient
    from gpupoc.airflow_runtime.processes import RuntimeState
    from gpupoc.airflow_runtime.topology import component_alive
    from gpupoc.airflow_runtime.settings import STATE_FILE
    from gpupoc.exceptions import SourceUnavailable

    state = RuntimeState.load(home / STATE_FILE)
    if state is None or not state.pids or not all(component_alive(p) for p in state.pids.values()):
        return None
    try:
        AirflowClient.for_home(home, url=state.url).health()
    except (SourceUnavailable, GpupocError):
        return None
    return {"url": state.url, "pids": dict(state.pids)}


def start_airflow(paths: DemoPaths, table: PidFile, plan: Path, port: int = 8080) -> tuple[dict, bool]:
    """Reuse the deployment under ``var/airflow`` when it runs for ``plan``, else (re)start it.

    Returns (state with url and pids, reused)."""
    from gpupoc.airflow_runtime.processes import down, up
    from gpupoc.airflow_runtime.settings import RuntimeSettings, free_port, plan_users

    home = paths.airflow
    running = airflow_running(home)
    if running and table.meta.get("airflow_plan") == str(plan):
        _record_airflow(table, running["pids"])
        return running, True
    down(home)
    table.forget(*[n for n in table.entries if n.startswith(AIRFLOW_PREFIX)])
    settings = RuntimeSettings(home=home, port=port if port and port_free(port) else free_port(),
                               extra_env={"GPUPOC_PLAN": str(plan)}, users=plan_users(plan))
    try:
        state = up(settings)
    finally:
        from gpupoc.airflow_runtime.processes import RuntimeState
        from gpupoc.airflow_runtime.settings import STATE_FILE

        recorded = RuntimeState.load(home / STATE_FILE)
        if recorded:
            _record_airflow(table, recorded.pids)
    table.meta["airflow_plan"] = str(plan)
    table.save()
    return {"url": state.url, "pids": dict(state.pids)}, False


def _record_airflow(table: PidFile, pids: dict[str, int]) -> None:
    for name, pid in pids.items():
        table.record(AIRFLOW_PREFIX + name, int(pid), "airflow")


def stop_everything(paths: DemoPaths) -> dict[str, str]:
    """``gpupoc down``: Airflow, the monitoring stack, then the cluster; every recorded pid, by pid."""
    from gpupoc.airflow_runtime.processes import down as airflow_down
    from gpupoc.demo.pids import stop_all
    from gpupoc.monitoring import stack

    table = PidFile.load(paths.pids)
    result: dict[str, str] = {}
    if any(n.startswith(AIRFLOW_PREFIX) for n in table.entries):
        for name, outcome in (airflow_down(paths.airflow) or {}).items():
            result[AIRFLOW_PREFIX + name] = outcome
    if any(n.startswith(STACK_PREFIX) for n in table.entries):
        for item in stack.down(paths.monitoring):
            result[STACK_PREFIX + item.split(" ", 1)[0]] = "stopped"
    order = [n for n in table.entries if n.startswith(COMPARE_PREFIX)] + \
            [n for n in table.entries if n.startswith(AIRFLOW_PREFIX)] + \
            [n for n in table.entries if n.startswith(STACK_PREFIX)] + ["sim"]
    for name, outcome in stop_all(table, order).items():
        if outcome != "not running" or name not in result:
            result[name] = outcome
    from gpupoc.demo.kwok import stop_kwok_cluster

    result.update(stop_kwok_cluster(table))
    table.meta.pop("airflow_plan", None)
    table.save()
    return result
