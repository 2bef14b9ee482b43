"""Load, check and hash a POC plan."""

from __future__ import annotations

import hashlib
import json
import os
from functools import lru_cache
import logging
from pathlib import Path

from gpupoc.common.validation import load_yaml_model, parse_model, read_yaml
from gpupoc.exceptions import ConfigError
from gpupoc.plan.checks import check_plan
from gpupoc.plan.document import Plan
from gpupoc.plan.files import check_files
from gpupoc.plan.overrides import item_workload
from gpupoc.plan.platforms import check_platforms, choose, split_ref
from gpupoc.plan.waves import class_items

DEFAULT_PLAN = Path(__file__).resolve().parents[3] / "plans" / "default.yaml"

log = logging.getLogger(__name__)
log.addHandler(logging.NullHandler())  # warnings reach the caller's logging (Airflow's task log), never stderr twice


def load_plan(path: str | Path, kubeconfig_later: bool = False) -> Plan:
    """Read and fully check a plan file; raise ConfigError listing every problem with its path.

    Files the plan names that appear later (the simulated cluster's kubeconfig, logs) are ``plan.warnings``;
    ``kubeconfig_later``: the plan's kubeconfig is about to be written (``gpupoc cluster``), a warning too.
    """
    file, platform = split_ref(str(path))
    p = Path(file)
    if platform is None:
        plan = load_yaml_model(Plan, p, "POC plan")
    else:  # the plan file with one of its platforms chosen (gpupoc.plan.platforms)
        data = read_yaml(p, "POC plan")
        if not isinstance(data, dict):
            raise ConfigError(str(p), [f"(root): expected a mapping, got {type(data).__name__}"])
        plan = parse_model(Plan, choose(data, platform, str(path)), str(path))
    return _checked(plan, str(path), p.resolve().parent, kubeconfig_later)


@lru_cache(maxsize=8)
def _load_cached(path: str, mtime: float) -> Plan:
    return load_plan(path)


def load_plan_file(path: str | os.PathLike) -> Plan:
    """The checked plan at ``path``, cached per file modification time within one process (every task of a
    run and every mapped pod task reads the same plan)."""
    p = os.fspath(path)
    try:
        mtime = os.stat(split_ref(p)[0]).st_mtime
    except OSError:
        raise ConfigError(p, ["(file): POC plan not found; set the run's `plan` parameter or GPUPOC_PLAN "
                              "to an existing plan file"]) from None
    return _load_cached(p, mtime)


def parse_plan(data: dict, source: str = "plan", base_dir: str | Path | None = None) -> Plan:
    """Check plain data as a plan (relative paths resolve against ``base_dir``, else the working directory)."""
    plan = parse_model(Plan, data, source)
    return _checked(plan, source, Path(base_dir).resolve() if base_dir else Path.cwd())


def _checked(plan: Plan, source: str, base_dir: Path, kubeconfig_later: bool = False) -> Plan:
    plan._base_dir = base_dir
    files = check_files(plan, kubeconfig_later)
    errors = check_plan(plan) + check_platforms(plan) + files.errors
    if errors:
        raise ConfigError(source, errors)
    plan._warnings = tuple(files.warnings)
    for line in plan.warnings:
        log.warning("%s: %s", source, line)
    return plan


def canonical_json(plan: Plan) -> str:
    """The plan as JSON with sorted keys and no whitespace: the input of ``plan_hash``."""
    return json.dumps(plan.model_dump(mode="json"), sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def plan_hash(plan: Plan) -> str:
    """sha256 (hex) of the plan's canonical JSON; equal plans hash equal whatever their YAML layout."""
    return hashlib.sha256(canonical_json(plan).encode("utf-8")).hexdigest()


def summary(plan: Plan) -> list[str]:
    """A few lines describing the plan (printed by ``gpupoc plan validate``)."""
    capacity = sum(p.capacity_gpus for p in plan.pools)
    lines = [
        f"plan {plan.name!r} (sha256 {plan_hash(plan)[:12]}): platform {plan.platform.name!r}, "
        f"adapter {plan.platform.adapter.value}",
        f"  {len(plan.tenants)} tenants, {len(plan.pools)} pools ({capacity} GPUs), {len(plan.workloads)} workloads",
    ]
    for tc, spec in plan.test_classes.items():
        items = class_items(plan, tc)
        gpus = sum(item_workload(plan, i).gpus for i in items)
        state = "enabled" if spec.enabled else "disabled"
        lines.append(f"  {tc.value}: {state}, {len(items)} pods, {gpus} GPUs requested")
    w = plan.window
    lines.append(f"  window {w.start.isoformat()} .. {w.end.isoformat()} {w.schedule} ({w.timezone})")
    lines.append(f"  evidence root {plan.evidence_root_path}")
    return lines
