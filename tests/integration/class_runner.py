"""A test class's run without Airflow: the DAG's own steps (``gpupoc.steps``) in threads, and the wave
submitted as ``GpuWorkloadOperator`` would submit it.

A plan whose class submits in bulk runs the bulk shard step (``steps.bulk.submit_shard``) for each shard, as the
DAG's ``bulk_shard`` tasks do. Otherwise what stands in for Airflow is only the wave's tasks: each item's pod is built by the plan's pod builder and
created with its tenant's identity (gated until the release), its submission recorded as the operator records
it, and when its pod ended the attempt's outcome is decided and recorded as the operator does
(``steps.attempt_decision``); an attempt the platform preempted or evicted is submitted again ungated, as the
task's Airflow retry would, when that decision says so (the plan's ``resubmission.limit``). A pod the platform
requeued itself is followed instead. Everything else (observer, release, collection, validation) is the
pipeline's real code.
"""

from __future__ import annotations

import secrets
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

from gpupoc.common.timefmt import utcnow
from gpupoc.pipeline import wave as W
from gpupoc.pipeline.attempts import NextAttempt, Submission, TaskDecision
from gpupoc.pipeline.open_items import TaskState
from gpupoc.pipeline.workload_outcome import Rejection
from gpupoc.plan.overrides import item_workload
from gpupoc.podspec.build import build_pod
from gpupoc.steps import bulk as bulk_steps
from gpupoc.steps import collect, finish, setup
from gpupoc.steps.attempt_decision import decide, record_refusal
from gpupoc.steps import wave as wave_steps
from gpupoc.steps.context import RunContext
from gpupoc.steps.gangs import create_pod_groups
from gpupoc.classes.registry import definition
from gpupoc.steps.markers import RELEASE_FILE
from kubernetes.client import ApiClient

from tests.integration.service_runner import Services

UNSEEN = "check.unseen_rows"  # validation/reasons.json: waits nobody observed left the check unjudged
HARNESS_LAG = "check.harness_lag"  # the load generator's own lag distorted the traffic: the SLO left unjudged
UNJUDGED = (UNSEEN, HARNESS_LAG)


@dataclass
class ClassRun:
    """What one headless run produced."""

    run_dir: Path
    verdicts: dict[str, str]            # check id -> pass | fail | not_verified
    summary: dict
    errors: list[str] = field(default_factory=list)
    decisions: list = field(default_factory=list)   # the stand-in wave tasks' TaskDecisions
    steps: dict = field(default_factory=dict)       # task id -> what its step returned (observe, release_gate)
    reasons: dict = field(default_factory=dict)     # check id -> its reason code

    @property
    def unseen(self) -> frozenset[str]:
        """Checks left not verified only because no snapshot or event saw some waits (``validation.unseen``) or
        because the load generator's own lag distorted the traffic (SVC-01, ``check.harness_lag``): the harness's
        gap, not the platform's behaviour; such a check judged nothing."""
        return frozenset(c for c, v in self.verdicts.items()
                         if v == "not_verified" and self.reasons.get(c) in UNJUDGED)

    def file(self, name: str, default=None):
        """A JSON file of the run's evidence (``files/<name>.json``)."""
        import json

        path = self.run_dir / "files" / f"{name}.json"
        return json.loads(path.read_text()) if path.is_file() else default


class Wave:
    """The wave's tasks: submit every item gated, then resubmit what the platform preempted or evicted."""

    def __init__(self, ctx: RunContext):
        self.ctx = ctx
        self.plan = ctx.plan
        self.items = {i.name: i for i in ctx.wave_items()}
        self.tries: dict[str, int] = {}
        self.pods: dict[str, str] = {}     # item -> latest pod name
        self.errors: list[str] = []
        self.decisions: list[TaskDecision] = []  # what the stand-in tasks decided, as the operator records it

    def submit(self, key: str, gated: bool) -> None:
        item, try_number = self.items[key], self.tries.get(key, 0) + 1
        self.tries[key] = try_number
        tenant = self.plan.tenant(item.tenant)
        name = f"{key}-{secrets.token_hex(4)}"
        pod = build_pod(item_workload(self.plan, item), tenant, self.plan, run_id=self.ctx.run_id,
                        test_class=self.ctx.test_class, wave_gate=gated, name=key,
                        priority_class=item.priority_class, role=item.role)
        body = ApiClient().sanitize_for_serialization(pod)
        body["metadata"]["name"] = name  # the operator adds a random suffix to the item's name
        # as KubernetesPodOperator: the tenant's own client, outside the pipeline's ledger (collect ledgers the
        # operator's submissions from the pods themselves)
        r = self.ctx.factory.caller(tenant.kube_context).call(
            "POST", f"/api/v1/namespaces/{tenant.namespace}/pods", body=body)
        rejection = None if r.ok else Rejection(r.status, r.message, utcnow())
        self.ctx.writer.write_json(f"submission-{key}-try{try_number}", Submission(
            key, tenant.namespace, name if r.ok else None, utcnow(), try_number, rejection).to_dict())
        if r.ok:
            self.pods[key] = name
        elif r.status in (400, 403, 409, 422):
            self.decisions.append(record_refusal(self.ctx, key, tenant.namespace, try_number, rejection))
        else:
            self.errors.append(f"{key}: HTTP {r.status} {r.message}")

    def retry_loop(self, stop: threading.Event, grace_s: float = 2.0, poll_s: float = 1.0) -> None:
        """The Airflow retries: when an item's latest pod ended, its outcome is decided as the operator decides
        it (``steps.attempt_decision.decide``: the same records as the evidence, recorded for the observer);
        an item the decision resubmits is submitted again (after a short grace in which the platform's own
        requeue would be followed)."""
        reader = self.ctx.reader()
        decided: dict[str, TaskDecision] = {}   # pod -> the decision on it
        ended_since: dict[str, float] = {}
        while not stop.wait(poll_s):
            if not self.ctx.files(RELEASE_FILE).is_file():
                continue
            present = {W.item_key(p): p for p in W.list_pods(reader, self.ctx.namespaces, self.ctx.selector)
                       if not (p.get("metadata") or {}).get("deletionTimestamp")}
            for key, name in list(self.pods.items()):
                latest = present.get(key)
                if latest is not None and latest["metadata"]["name"] != name:
                    self.pods[key] = latest["metadata"]["name"]  # the platform requeued it: follow its pod
                    continue
                if latest is not None and (latest.get("status") or {}).get("phase") != "Failed":
                    continue
                if name not in decided:
                    ns = self.plan.tenant(self.items[key].tenant).namespace
                    outcome, decision = decide(self.ctx, key, ns, name, self.tries[key])
                    if decision is None:
                        continue
                    decided[name] = decision
                    self.decisions.append(decision)
                if decided[name].next is not NextAttempt.RESUBMIT:
                    continue
                since = ended_since.setdefault(name, time.monotonic())
                if time.monotonic() - since >= grace_s:
                    self.submit(key, gated=False)


_SHARD = """
import json, sys
from gpupoc.steps.bulk import submit_shard
from gpupoc.steps.context import RunContext
a = json.loads(sys.argv[1])
submit_shard(RunContext(a["plan"], a["dag_id"], a["run_id"], a["test_class"], task="bulk_shard"), a["shard"])
"""


def run_shard(plan: str, dag_id: str, run_id: str, test_class: str, shard: dict, failures: list[str]) -> None:
    """One ``bulk_shard`` task: ``steps.bulk.submit_shard`` in a process of its own."""
    import json
    import subprocess
    import sys

    arg = json.dumps({"plan": plan, "dag_id": dag_id, "run_id": run_id, "test_class": test_class, "shard": shard})
    res = subprocess.run([sys.executable, "-c", _SHARD, arg], capture_output=True, text=True)
    if res.returncode != 0:
        failures.append(f"bulk_shard {shard['shard']}: exit {res.returncode}: {res.stderr[-2000:]}")


def run_class(plan_file: Path, test_class: str, run_id: str, probes: tuple[str, ...] = ()) -> ClassRun:
    """validate_plan, check_access, the gangs' PodGroups, the wave, observe and release_gate together (with the
    class's probes named in ``probes``, as the DAG runs them beside the observer), collect, validate."""
    dag_id = f"poc_{test_class}"
    v = setup.validate_plan(str(plan_file), dag_id, run_id, test_class, {})
    ctx = RunContext(v["plan"], dag_id, run_id, test_class, task="headless")
    setup.check_access(ctx)
    create_pod_groups(RunContext(v["plan"], dag_id, run_id, test_class, task="prepare_wave"))
    failures: list[str] = []
    services = Services(v["plan"], dag_id, run_id, test_class, failures)
    services.start()  # rolled out before the wave, as services_ready is upstream of prepare_wave and the release
    shards = bulk_steps.shards(ctx)  # the plan's submission: bulk shards, else the stand-in operator tasks
    wave = Wave(ctx)
    for key in wave.items if not shards else ():
        wave.submit(key, gated=True)
    stop = threading.Event()
    results: dict[str, dict] = {}

    def run(step, name):
        try:
            results[name] = step(RunContext(v["plan"], dag_id, run_id, test_class, task=name))
        except Exception as exc:  # noqa: BLE001 - reported by the caller's assertion
            failures.append(f"{name}: {exc!r}")

    # each shard in its own process, as each bulk_shard task runs in its own Airflow task process
    bulk = [threading.Thread(target=run_shard, args=(v["plan"], dag_id, run_id, test_class, s, failures))
            for s in shards]
    for t in bulk:
        t.start()
    def shard_states():  # as the DAG's observer reads the bulk_shard tasks: an item is where its shard's task is
        return {key: TaskState.ACTIVE if t.is_alive() else TaskState.ENDED
                for t, s in zip(bulk, shards) for key in s["items"]}

    observe = (lambda c: wave_steps.observe(c, shard_states)) if shards else wave_steps.observe
    observer = threading.Thread(target=run, args=(observe, "observe"))
    retries = threading.Thread(target=wave.retry_loop, args=(stop,))
    side = [threading.Thread(target=run, args=(step, task_id)) for task_id, step in definition(test_class).probes
            if task_id in probes]
    observer.start()
    retries.start()
    for t in side:
        t.start()
    run(wave_steps.release_gate, "release_gate")
    observer.join()
    for t in side:
        t.join()
    stop.set()
    retries.join()
    for t in bulk:
        t.join()
    services.finish()
    if services.observer is not None:
        results["observe_services"] = services.observed
    collected = collect.collect(RunContext(v["plan"], dag_id, run_id, test_class, task="collect_evidence"),
                              v["started_at"])
    result = finish.validate(RunContext(v["plan"], dag_id, run_id, test_class, task="validate"),
                            collected["run_dir"])
    import json

    summary = json.loads(Path(result["summary_path"]).read_text())
    for s in shards:  # an attempt a shard failed to decide was never resubmitted: the harness's defect
        done = json.loads((Path(collected["run_dir"]) / "files" / f"bulk_shard-{s['shard']}.json").read_text())
        if done.get("undecided"):
            failures.append(f"bulk_shard {s['shard']}: {done['undecided']} attempt(s) undecided: {done['errors'][:3]}")
    checks = [c for s in summary["suites"] for c in s.get("checks", [])]
    verdicts = {c["check_id"]: c["verdict"] for c in checks}
    manifest = json.loads((Path(collected["run_dir"]) / "manifest.json").read_text())
    return ClassRun(Path(collected["run_dir"]), verdicts, manifest.get("summary", {}), failures + wave.errors,
                    wave.decisions, results, reasons={c["check_id"]: c.get("reason_code") for c in checks})
