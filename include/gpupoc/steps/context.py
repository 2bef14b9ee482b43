"""``RunContext``: one run of one test class, its plan, evidence writer, clients and ledger.

Every step and probe derives what it needs from (plan file, dag id, run id, test class): any task of a run,
on any worker, finds the same paths.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import datetime
from functools import cached_property
from pathlib import Path
from typing import Any, Callable

from gpupoc.pipeline import wave as W
from gpupoc.plan.overrides import planned_seconds
from gpupoc.plan.replay import replay_span_seconds

# kubeadm's name for the cluster administrator: used when the API server cannot say who we are.
DEFAULT_ADMIN_USER = "kubernetes-admin"
# The harness's part each task is, named in its clients' User-Agent (``gpupoc-<component>/<version>``) so the
# API server's audit log and metrics tell them apart; a task not listed is a class's probe.
TASK_COMPONENTS = {
    **dict.fromkeys(("validate_plan", "preflight", "check_access"), "setup"),
    **dict.fromkeys(("prepare_wave", "wave", "bulk_shard", "release_gate", "prepare_services", "deploy_service",
                     "services_ready", "delete_service", "cleanup"), "submitter"),
    **dict.fromkeys(("observe", "observe_services"), "observer"),
    **dict.fromkeys(("collect_evidence", "validate"), "collector"),
}


def task_component(task: str) -> str:
    """The component a task's clients name (``""`` for a context no task holds: the client's own agent)."""
    return TASK_COMPONENTS.get(task, "probe") if task else ""


@dataclass
class RunContext:
    """One run of one test class: its plan, evidence writer, clients and ledger."""

    plan_file: str
    dag_id: str
    run_id: str
    test_class: str
    task: str = ""
    _factory: Any = field(default=None, repr=False)
    _held_pods: dict | None = field(default=None, init=False, repr=False)
    _held_audit: tuple[dict, list] | None = field(default=None, init=False, repr=False)

    @cached_property
    def plan(self):
        from gpupoc.plan import load_plan_file

        return load_plan_file(self.plan_file)

    @cached_property
    def spec(self):
        return self.plan.test_class(self.test_class)

    @cached_property
    def writer(self):
        from gpupoc.evidence import EvidenceWriter

        return EvidenceWriter(self.plan.evidence_root_path, self.dag_id, self.run_id)

    @property
    def run_dir(self) -> Path:
        return self.writer.run_dir

    @cached_property
    def factory(self):
        from gpupoc.pipeline.k8s import ClientFactory

        kubeconfig = self.plan.kubeconfig_path
        return self._factory or ClientFactory(str(kubeconfig) if kubeconfig else None)

    @cached_property
    def ledger(self):
        from gpupoc.pipeline.audit import Ledger

        return Ledger(self.run_dir / "ledger" / f"{self.task or 'task'}.jsonl", task=self.task)

    def admin_actor(self):
        """The administrator as the audit log names it (found by check_access, see ``whoami``)."""
        from gpupoc.pipeline.k8s import Actor

        who = self.read_file("identity", {}) or {}
        return Actor(self.admin_context, who.get("username") or DEFAULT_ADMIN_USER, tuple(who.get("groups") or ()))

    @property
    def admin_context(self) -> str:
        """The administrator's kubeconfig context; ``in-cluster`` when the plan names none (a service account)."""
        return self.plan.platform.admin_context or "in-cluster"

    def admin(self, purpose: str = ""):
        """The administrator's client; every request lands in this task's ledger."""
        from gpupoc.pipeline.audit import LedgerCaller

        return LedgerCaller(self.caller(self.admin_context), self.admin_actor(), self.ledger, purpose)

    def tenant(self, name: str, purpose: str = ""):
        from gpupoc.pipeline.audit import LedgerCaller
        from gpupoc.pipeline.k8s import service_account_actor

        t = self.plan.tenant(name)
        actor = service_account_actor(t.kube_context, t.namespace, t.service_account)
        return LedgerCaller(self.caller(t.kube_context), actor, self.ledger, purpose)

    @cached_property
    def items(self) -> list[dict]:
        from gpupoc.common.test_classes import TestClass

        return W.prepare_wave(self.plan, self.test_class, TestClass(self.test_class).operator_roles)

    @property
    def namespaces(self) -> list[str]:
        return sorted({t.namespace for t in self.plan.tenants})

    @property
    def selector(self) -> str:
        return W.selector(self.run_id, self.test_class)

    def hold_timeout_s(self) -> float:
        """How long the wave may take once released: the longest acceptable wait plus the longest workload."""
        durations = [planned_seconds(self.plan, i) for i in self.wave_items()]
        return self.plan.longest_acceptable_wait_seconds() + max(durations, default=0) + 120

    def observe_timeout_s(self) -> float:
        """The observer's deadline: the gate's hold, the wave (a replayed wave's releases span its schedule),
        and every resubmission the plan allows."""
        durations = [planned_seconds(self.plan, i) for i in self.wave_items()]
        policy = self.spec.resubmission
        again = policy.limit * (policy.wait_seconds + max(durations, default=0))
        span = replay_span_seconds(self.plan, self.test_class)
        return self.spec.gate_timeout_seconds + span + self.hold_timeout_s() + again

    def reader(self):
        """The administrator's client for reads the ledger does not record (observing, collecting)."""
        return self.caller(self.admin_context)

    def caller(self, context: str):
        """``context``'s client, its User-Agent naming this task's component (``task_component``)."""
        return self.factory.caller(context, task_component(self.task))

    def observed_pods(self) -> dict[tuple[str, str], dict]:
        """The last state of every pod the observer saw, by (namespace, name); once ``hold_observed_pods`` was
        called, the held pods."""
        from gpupoc.steps.markers import OBSERVED_PODS

        if self._held_pods is not None:
            return self._held_pods
        return _by_key(self.read_file(OBSERVED_PODS, []) or [])

    def hold_observed_pods(self, current: list[dict]) -> None:
        """From now on ``observed_pods`` answers from memory: the observer's pods read once, each pod the cluster
        still holds (``current``) in its current state. Collection reads them in several stages; at 10,000 pods
        each read parses some 60 MB."""
        pods = self.observed_pods()  # the held ones, once held
        pods.update(_by_key(current))
        self._held_pods = pods

    def holds_as_observed(self, pods: list[dict]) -> bool:
        """Whether ``pods`` are, in order, the very objects held from the observer's saved pods (``OBSERVED_PODS``):
        their document is then that file, byte for byte. False while none are held (not worth reading them for)."""
        held = self._held_pods
        return held is not None and len(held) == len(pods) and all(a is b for a, b in zip(held.values(), pods))

    def submissions(self):
        """The operator's records of every pod it submitted (or whose creation was refused)."""
        from gpupoc.steps.submission_files import read_submissions

        return read_submissions(self.writer.files_dir)

    def platform_records(self, namespaces: list[str] | None = None, events: list[dict] | None = None):
        """What the platform recorded about the wave's pods (of ``namespaces``, all the run's by default):
        events (``events`` when already read), owners' conditions, audited deletes."""
        from gpupoc.pipeline.attempts import Evidence
        from gpupoc.pipeline.audit_deletes import pod_deletions
        from gpupoc.pipeline.observe import list_events, owner_statements

        reader = self.reader()
        namespaces = namespaces or self.namespaces
        owner, uids = owner_statements(reader, self.plan, namespaces)
        held, wanted = self._held_audit, set(namespaces)
        if held is not None and wanted <= set(self.namespaces):
            deletions = {k: v for k, v in held[0].items() if k[0] in wanted}
        else:
            deletions = self._audit_read(lambda source, since: pod_deletions(source, namespaces, since=since), {})
        return Evidence(list_events(reader, namespaces) if events is None else events, owner, deletions, uids)

    def audit_bindings(self) -> list:
        """The pod bindings in any namespace in the audit log since the run started (``pipeline/audit_deletes.py``)."""
        from gpupoc.pipeline.audit_deletes import pod_bindings

        if self._held_audit is not None:
            return self._held_audit[1]
        return self._audit_read(lambda source, since: pod_bindings(source, None, since=since), [])

    def hold_audit_reads(self) -> None:
        """From now on the audit log's pod deletes (of the run's namespaces) and bindings are the ones read now:
        collection reads them once, while its catch-up watches wait for the API server (the log of a 10,000-pod
        wave is some 160 MB, read twice)."""
        from gpupoc.pipeline.audit_deletes import pod_deletions

        deletions = self._audit_read(lambda source, since: pod_deletions(source, self.namespaces, since=since), {})
        self._held_audit = (deletions, self.audit_bindings())

    def _audit_read(self, read: Callable[[Any, datetime | None], Any], empty: Any) -> Any:
        """``read(source, since)`` of the plan's audit source from the run's start (``empty`` without a source)."""
        from gpupoc.common.timefmt import parse_time
        from gpupoc.monitoring.audit_source import plan_audit_source

        source = plan_audit_source(self.plan)
        if source is None:
            return empty
        return read(source, parse_time((self.read_file("run_params", {}) or {}).get("started_at")))

    def wave_items(self):
        """The plan's items of the wave this run submits through the operator (``items``), typed."""
        from gpupoc.plan import class_items

        keys = {i["workload_key"] for i in self.items}
        return [i for i in class_items(self.plan, self.test_class) if i.name in keys]

    def files(self, name: str) -> Path:
        return self.run_dir / "files" / f"{name}.json"

    def read_file(self, name: str, default: Any = None) -> Any:
        p = self.files(name)
        # the standard library, not orjson: it shares the keys of 10,000 pods' dicts (orjson's copies took 80 MiB
        # more at collection) and was no slower here
        return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else default


def _by_key(pods: list[dict]) -> dict[tuple[str, str], dict]:
    return {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in pods}


def run_context(plan: str | Path | None, dag_id: str, run_id: str, test_class: str = "", task: str = "",
                factory: Any = None) -> RunContext:
    """The one place a run's context is built, for every task and operator of a class DAG.

    ``plan`` is the plan as a task holds it (the trigger form's path, a plan reference ``file#platform``, or
    nothing for the default plan; relative paths resolve against the repository). ``test_class`` defaults to
    the class of the DAG ``poc_<class>``."""
    from gpupoc.pipeline.common import plan_path

    return RunContext(str(plan_path(str(plan) if plan else None)), dag_id, run_id,
                      test_class or dag_id.removeprefix("poc_"), task=task, _factory=factory)
