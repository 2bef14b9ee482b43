"""One plan, several candidate platforms: the ``platforms:`` list, the choice made at run time
(``--platform NAME``, the DAG runs' ``platform`` parameter) and the plan hash that leaves the choice out.

A choice replaces the plan's ``platform`` block with the named entry (its adapter, kubeconfig, context and
options over the block's own) and moves the evidence to ``<evidence_root>/<name>`` unless the entry names its
own root. Everything else (waves, probes, thresholds, seeds) stays as written, so the runs of one plan on
several platforms are comparable: ``comparable_hash`` is equal for all of them.

A plan reference ``plans/default.yaml#kueue`` is the plan file with the choice ``kueue``: it is what every
task of a run reads (``load_plan_file``), so the choice travels with the plan.
"""

from __future__ import annotations

import copy
import hashlib
import json
from typing import Any

from pydantic import Field

from gpupoc.exceptions import ConfigError
from gpupoc.common.fields import StrictModel
from gpupoc.plan.model import Adapter, AdapterOptions

REF_SEPARATOR = "#"
# What says where and when a plan runs, not what it tests: left out of the comparable hash.
NOT_COMPARED = ("platform", "platforms", "platform_choice", "evidence_root", "evidence_sources", "window")
PLATFORM_KEYS = ("adapter", "kubeconfig", "kubernetes_conn_id", "in_cluster", "admin_context", "options")
ACCESS_KEYS = ("kubeconfig", "kubernetes_conn_id", "in_cluster")


class PlatformEntry(StrictModel):
    """One candidate platform of the plan; unset fields keep the ``platform`` block's."""

    name: str = Field(min_length=1, pattern=r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$",
                      description="what --platform names and the comparison labels")
    adapter: Adapter
    description: str = ""
    kubeconfig: str | None = Field(default=None, description="path; relative paths resolve against the plan file")
    kubernetes_conn_id: str | None = None
    in_cluster: bool | None = None
    admin_context: str | None = None
    options: AdapterOptions | None = None
    evidence_root: str | None = Field(default=None, description="default: <evidence_root>/<name>")


def split_ref(ref: str) -> tuple[str, str | None]:
    """``plans/default.yaml#kueue`` -> (``plans/default.yaml``, ``kueue``); no ``#``: no choice."""
    path, sep, name = str(ref).rpartition(REF_SEPARATOR)
    if not sep or not name or "/" in name:
        return str(ref), None
    return path, name


def plan_ref(path: str, platform: str | None) -> str:
    """The reference of plan file ``path`` with ``platform`` chosen (the path itself when none is)."""
    return f"{path}{REF_SEPARATOR}{platform}" if platform else str(path)


def entry_names(data: dict) -> list[str]:
    return [str(e.get("name")) for e in (data.get("platforms") or []) if isinstance(e, dict)]


def choose(data: dict, name: str, source: str) -> dict:
    """The plan data with platform ``name`` of its ``platforms:`` list chosen; a ConfigError naming the
    known platforms when there is no such entry."""
    entries = [e for e in (data.get("platforms") or []) if isinstance(e, dict)]
    entry = next((e for e in entries if e.get("name") == name), None)
    if entry is None:
        known = ", ".join(entry_names(data)) or "none"
        raise ConfigError(source, [f"platforms: no platform {name!r} (known: {known}); choose one of them with "
                                   "--platform or add an entry named so to the plan's platforms list"])
    if data.get("platform_choice"):
        raise ConfigError(source, [f"platform_choice: the plan was already run as {data['platform_choice']!r}; "
                                   "choose the platform on the original plan file"])
    out = copy.deepcopy(data)
    platform = dict(out.get("platform") or {})
    if any(entry.get(k) not in (None, False) for k in ACCESS_KEYS):
        for k in ACCESS_KEYS:
            platform.pop(k, None)
    for key in PLATFORM_KEYS:
        if entry.get(key) is not None:
            platform[key] = copy.deepcopy(entry[key])
    platform["name"] = name
    out["platform"] = platform
    root = str(out.get("evidence_root") or "")
    out["evidence_root"] = entry.get("evidence_root") or (f"{root.rstrip('/')}/{name}" if root else root)
    out["platform_choice"] = name
    return out


def check_platforms(plan: Any) -> list[str]:
    """Repeated platform names and a recorded choice the list does not hold."""
    errors, seen = [], set()
    for i, entry in enumerate(plan.platforms):
        if entry.name in seen:
            errors.append(f"platforms[{i}].name: duplicate platform {entry.name!r}; platform names must be unique")
        seen.add(entry.name)
    if plan.platform_choice and plan.platform_choice not in seen:
        known = ", ".join(sorted(seen)) or "none"
        errors.append(f"platform_choice: {plan.platform_choice!r} is not in platforms ({known}); leave "
                      "platform_choice to --platform")
    return errors


def comparable_data(plan: Any) -> dict:
    """The plan as JSON data without where and when it runs (``NOT_COMPARED``)."""
    data = plan.model_dump(mode="json")
    return {k: v for k, v in data.items() if k not in NOT_COMPARED}


def comparable_hash(plan: Any) -> str:
    """sha256 of ``comparable_data``: equal for one plan run on any of its platforms."""
    text = json.dumps(comparable_data(plan), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def identity(plan: Any) -> dict:
    """What a run's manifest records so runs on several platforms can be put side by side."""
    return {"plan_name": plan.name, "platform_name": plan.platform.name,
            "platform_choice": plan.platform_choice, "comparable_plan_hash": comparable_hash(plan)}
