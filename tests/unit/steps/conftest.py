"""Fixtures of the step tests: the default plan with its evidence under a temporary directory, a run context
on it, and a stand-in for the cluster's API (``tests/unit/pipeline/fake_api.py``) behind the context's clients."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from gpupoc.pipeline.common import repo_root
from gpupoc.podspec import labels as L
from gpupoc.steps.context import RunContext

from ..pipeline.fake_api import FakeApi, pod

RUN_ID = "manual__2026-12-01T09:00:00+00:00"
TC = "queue_congestion"


def write_plan(tmp: Path, name: str = "default", change=None) -> Path:
    """The shipped plan ``name`` with its evidence and audit log under ``tmp`` (``change(data)`` edits it)."""
    data = yaml.safe_load((repo_root() / "plans" / f"{name}.yaml").read_text())
    tmp.mkdir(parents=True, exist_ok=True)
    data["evidence_root"] = str(tmp / "evidence")
    audit = tmp / "audit.log"
    audit.write_text("")
    data["evidence_sources"]["audit_log_path"] = str(audit)
    if change:
        change(data)
    path = tmp / f"{name}.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


class Clients:
    """What ``RunContext.factory`` gives the steps: one API stand-in for every context."""

    def __init__(self, api: FakeApi):
        self.api = api
        self.contexts: list[str] = []

    def caller(self, context: str, component: str = "") -> FakeApi:
        self.contexts.append(context)
        return self.api


def wave_pod(ctx: RunContext, item: dict, suffix: str = "x1", **kw) -> dict:
    """A pod of the run's wave item as the operator creates it: the run's labels, the item, the pipeline's gate."""
    p = pod(f"{item['workload_key']}-{suffix}", item["namespace"], item["workload_key"], **kw)
    p["metadata"]["labels"] = {L.RUN_ID: L.safe_label_value(ctx.run_id), L.TEST_CLASS: ctx.test_class,
                               L.ROLE: "wave"}
    return p


@pytest.fixture
def plan_file(tmp_path) -> Path:
    return write_plan(tmp_path)


@pytest.fixture
def make_ctx(plan_file):
    """``make_ctx(pods=(), task="t")``: a run context of the congestion class whose clients answer from ``pods``."""

    def make(pods=(), task: str = "step", test_class: str = TC, plan: Path | None = None) -> RunContext:
        api = FakeApi(list(pods))
        return RunContext(str(plan or plan_file), f"poc_{test_class}", RUN_ID, test_class, task, Clients(api))

    return make
