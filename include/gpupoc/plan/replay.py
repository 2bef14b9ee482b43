"""A replayed class's wave: its history read, a window of it planned for the plan's cluster, checked.

``replay_wave`` reads the class's history (``replay.file``, relative to the plan) and plans the window with
``gpupoc.history.plan_wave`` (tenants by share of GPU time, one pod per node of each job, compressed arrival
and run times, end states, priorities). ``replay_pods`` is one ``ReplayPod`` per pod, in arrival order;
``gpupoc.plan.waves.class_items`` turns them into wave items. Both are cached per (history file, its
modification time and size, the replay options, the plan): every task of a run and every mapped pod task
looks items up, and only the first reads the history.

``check_replays`` is the plan check: the history exists and reads, the window holds a job, the template
workload can carry a replayed job, and the whole wave fits each tenant's quota when it is created up front
(held by the gate: quota counts pending pods).
"""

from __future__ import annotations

import hashlib
import os
from collections import Counter
from functools import lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from gpupoc.exceptions import ConfigError
from gpupoc.plan.classes import TestClass
from gpupoc.plan.overrides import ReplayOverride, ReplayPod
from gpupoc.plan.replay_spec import ReplaySpec

if TYPE_CHECKING:  # the history's modules (pyarrow) load when a replay is expanded, not with every plan
    from gpupoc.history.replay import ReplayItem, ReplayWave
    from gpupoc.history.table import History

# Template settings that would fix what the replay sets per pod (the workload program reads the env, and its
# command-line flags win over it).
FIXED_ARGS = ("--duration", "--exit-code")
FIXED_ENV = ("WORKLOAD_DURATION_SECONDS", "WORKLOAD_EXIT_CODE")
_CACHE_SIZE = 16
_waves: dict[tuple, tuple[ReplayWave, tuple[ReplayPod, ...]]] = {}


def base_path(tc: TestClass | str) -> str:
    return f"test_classes.{TestClass(tc).value}.replay"


def replay_spec(plan, tc: TestClass | str) -> ReplaySpec | None:
    """The class's ``replay:`` section, or None when its wave is hand-written."""
    return getattr(plan.test_class(tc), "replay", None)


def replay_wave(plan, tc: TestClass | str) -> ReplayWave:
    """The class's replay wave (cached); ConfigError naming the field when it cannot be made."""
    return _expanded(plan, tc)[0]


def replay_pods(plan, tc: TestClass | str) -> list[ReplayPod]:
    """One pod per node of each replayed job, in arrival order (cached)."""
    return list(_expanded(plan, tc)[1])


def replay_span_seconds(plan, tc: TestClass | str) -> float:
    """From the wave's release to its last item's release (0 for a hand-written wave)."""
    return replay_wave(plan, tc).span_seconds if replay_spec(plan, tc) is not None else 0.0


def _expanded(plan, tc: TestClass | str) -> tuple[ReplayWave, tuple[ReplayPod, ...]]:
    tc = TestClass(tc)
    spec = replay_spec(plan, tc)
    if spec is None:
        raise ConfigError(base_path(tc), [f"{base_path(tc)}: the class has no replay section"])
    path, st = _stat(plan, tc, spec)
    plan_key = hashlib.sha256(plan.model_dump_json().encode("utf-8")).hexdigest()
    key = (str(path), st.st_mtime_ns, st.st_size, tc.value, plan_key)
    if key not in _waves:
        wave = _plan(plan, tc, spec, *_load(plan, tc, spec))
        if len(_waves) >= _CACHE_SIZE:
            _waves.pop(next(iter(_waves)))
        _waves[key] = (wave, tuple(pod for item in wave.items for pod in _pods(item)))
    return _waves[key]


def _stat(plan, tc: TestClass, spec: ReplaySpec) -> tuple[Path, os.stat_result]:
    path = plan.resolve_path(spec.file)
    try:
        return path, os.stat(path)
    except OSError:
        raise ConfigError(base_path(tc), [f"{base_path(tc)}.file: job history {str(path)!r} not found; give a "
                                          "history file (relative to the plan file), e.g. history/kalos-300.csv"]
                          ) from None


def _load(plan, tc: TestClass, spec: ReplaySpec) -> tuple[History, dict]:
    path, st = _stat(plan, tc, spec)
    return _history(str(path), st.st_mtime_ns, st.st_size, spec.format, spec.columns_text, spec.timezone,
                    spec.skip_bad_rows, base_path(tc))


@lru_cache(maxsize=4)
def _history(path: str, mtime_ns: int, size: int, fmt: str, columns: str | None, timezone: str,
             skip_bad_rows: bool, base: str) -> tuple[History, dict]:
    """The history at ``path`` as it is at ``mtime_ns`` (read once per process), and its source record."""
    from gpupoc.evidence.writer import sha256_file
    from gpupoc.history.importer import import_history
    from gpupoc.history.replay import wave_source
    from gpupoc.history.table import read_parquet

    try:
        if fmt == "parquet":
            history = read_parquet(path)
        else:
            history = import_history(path, fmt, columns=columns, timezone=timezone,
                                     skip_bad_rows=skip_bad_rows).history
    except ConfigError as exc:
        field = "columns" if exc.source == "--columns" else "file"
        raise ConfigError(base, [f"{base}.{field}: {_strip_flag(e)}" for e in exc.errors]) from None
    return history, wave_source(Path(path), history, sha256_file(Path(path)))


# The importer's advice names its command-line flags; in a plan they are fields of the replay section.
_FLAG_ADVICE = (("pass --skip-bad-rows", "set skip_bad_rows: true"),
                ("--errors FILE lists them all", "`gpupoc history import FILE --errors ERRORS` lists them all"))


def _strip_flag(line: str) -> str:
    """``--columns: unknown field 'x'`` -> ``unknown field 'x'`` (the CLI's flag names are not plan fields)."""
    line = line.split(": ", 1)[1] if line.startswith("--") and ": " in line else line
    for cli, plan_words in _FLAG_ADVICE:
        line = line.replace(cli, plan_words)
    return line


def _plan(plan, tc: TestClass, spec: ReplaySpec, history: History, source: dict) -> ReplayWave:
    from gpupoc.history.plan_wave import WaveOptions, parse_window, plan_wave

    base = base_path(tc)
    window = None
    if spec.window is not None:
        try:
            window = parse_window(spec.window, history.timezone)
        except ConfigError as exc:
            raise ConfigError(base, [f"{base}.window: {_strip_flag(e)}" for e in exc.errors]) from None
    options = WaveOptions(compression=spec.compress, window=window, first=spec.first, group_by=spec.group_by,
                          test_class=tc.value, min_duration_s=spec.min_duration_seconds,
                          short_run_s=spec.short_run_seconds, cut_share=spec.cut_share)
    try:
        wave = plan_wave(history, plan, options, source)
    except ConfigError as exc:
        raise ConfigError(base, [f"{base}: {_strip_flag(e)}" for e in exc.errors]) from None
    if not wave.items:
        raise ConfigError(base, [_empty_message(base, spec, wave, history)])
    return wave


def _empty_message(base: str, spec: ReplaySpec, wave: ReplayWave, history: History) -> str:
    times = [r.submit_time for r in history.records]
    spans = f"the history's jobs were submitted {min(times).isoformat()} .. {max(times).isoformat()}" if times \
        else "the history has no jobs"
    field = "window" if spec.window is not None else "first"
    if not wave.jobs_in_window:
        return (f"{base}.{field}: no job of the history in {wave.selection.window_start} .. "
                f"{wave.selection.window_end} ({spans}); choose a window inside it")
    dropped = ", ".join(f"{n} {reason}" for reason, n in wave.dropped.items())
    return (f"{base}.{field}: {wave.jobs_in_window} jobs in the selection, none the plan's cluster can replay "
            f"(dropped: {dropped}); choose another window or check the history's GPU counts and states")


def _pods(item: ReplayItem) -> list[ReplayPod]:
    return [ReplayPod(tenant=item.tenant, priority_class=item.priority_class, override=ReplayOverride(
        job_id=item.job_id, job_index=item.index, replica=r, replicas=item.replicas, gpus=item.gpus,
        job_gpus=item.gpus_total, pool=item.pool, duration_seconds=item.duration_seconds,
        expected_exit_code=item.expected_exit_code, outcome=item.outcome.value, at_seconds=item.at_seconds,
        task_type=item.task_type, cancel_after_seconds=item.cancel_after_seconds,
        deadline_seconds=item.deadline_seconds, history_state=item.history_state,
        history_wait_seconds=item.history_wait_seconds,
        history_wait_scaled_seconds=item.history_wait_scaled_seconds)) for r in range(item.replicas)]


# ---- the plan check ----
def check_replays(plan) -> list[str]:
    """Every problem of the plan's ``replay:`` sections (empty when none, or all are sound)."""
    errors: list[str] = []
    for tc, spec in plan.test_classes.items():
        replay = getattr(spec, "replay", None)
        if replay is None:
            continue
        base = base_path(tc)
        if spec.wave:
            errors.append(f"test_classes.{tc.value}.wave: a replayed class takes its wave from the history; "
                          "remove wave (or the replay section)")
        template = _template_problems(plan, base, replay)
        if template:
            errors += template
            continue
        try:
            wave = replay_wave(plan, tc)
        except ConfigError as exc:
            errors += exc.errors
            continue
        if spec.enabled:
            errors += _quota_problems(plan, tc, replay, wave)
    return errors


def _template_problems(plan, base: str, replay: ReplaySpec) -> list[str]:
    names = [w.name for w in plan.workloads]
    if replay.template not in names:
        return [f"{base}.template: unknown workload {replay.template!r}; one of {sorted(names)}"]
    w = plan.workload(replay.template)
    fixed = [a for a in (*w.command, *w.args) if a.split("=", 1)[0] in FIXED_ARGS] + \
        [k for k in FIXED_ENV if k in w.env]
    if fixed:
        return [f"{base}.template: workload {w.name!r} fixes {', '.join(fixed)}, which the replay sets per pod "
                f"(through {' and '.join(FIXED_ENV)}); choose a workload without them, such as a virtual one"]
    if w.expected_exit_code is None:
        return [f"{base}.template: workload {w.name!r} never ends by itself (expected_exit_code null); choose a "
                "workload that runs and exits"]
    return []


def _held(wave: ReplayWave) -> tuple[Counter, Counter]:
    """GPUs and pods of the whole wave per tenant."""
    gpus: Counter = Counter()
    pods: Counter = Counter()
    for item in wave.items:
        gpus[item.tenant] += item.gpus_total
        pods[item.tenant] += item.replicas
    return gpus, pods


def _over_quota(plan, wave: ReplayWave) -> list[tuple[str, int, int, str]]:
    """(tenant, held, quota, what) for every quota the wave exceeds."""
    gpus, pods = _held(wave)
    out = []
    for name in sorted(gpus):
        quota = plan.tenant(name).quota
        out += [(name, held, limit, what) for held, limit, what in ((gpus[name], quota.gpus, "GPUs"),
                                                                    (pods[name], quota.pods, "pods"))
                if held > limit]
    return out


def _quota_problems(plan, tc: TestClass, replay: ReplaySpec, wave: ReplayWave) -> list[str]:
    """The gated wave is created up front and quota counts pending pods: every tenant's share must fit."""
    over = _over_quota(plan, wave)
    if not over:
        return []
    field = "window" if replay.window is not None else "first"
    hint = _fitting_first(plan, tc, replay)
    return [f"{base_path(tc)}.{field}: tenant {name!r} would hold {held} {what} of replayed pods at once, "
            f"{held - limit} above its quota of {limit} (the gated wave is created up front and quota counts "
            f"pending pods); replay fewer jobs (a smaller first or window{hint}) or raise the tenant's quota"
            for name, held, limit, what in over]


def _fitting_first(plan, tc: TestClass, spec: ReplaySpec) -> str:
    """``; first: N fits`` for the largest N whose wave fits every quota, when there is one."""
    if spec.first is None:
        return ""
    history, source = _load(plan, tc, spec)
    for n in range(spec.first - 1, 0, -1):
        try:
            wave = _plan(plan, tc, spec.model_copy(update={"first": n}), history, source)
        except ConfigError:
            return ""
        if not _over_quota(plan, wave):
            return f"; first: {n} fits"
    return ""
