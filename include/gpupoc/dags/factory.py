"""One factory builds the five test-class DAGs from the same task groups.

Shape (every class)::

    validate_plan >> preflight (the class's prerequisites; a missing one fails here, nothing is submitted)
                  >> check_access >> hold_cluster (pool gpupoc_cluster, 1 slot, deferred until cleanup)
                  check_access >> cluster_acquired (sensor) >> prepare_wave >> wave (mapped, deferrable)
    validate_plan >> bulk_shards (from the plan) >> bulk_shard << prepare_wave (mapped: the wave in bulk shards)
    validate_plan >> prepare_services (from the plan) >> deploy_service << cluster_acquired (mapped: its services)
                                  cluster_acquired >> release_gate (lifts the gate of the whole wave at once)
                  cluster_acquired >> observe (snapshots from before the release to the wave's end)
                  cluster_acquired >> wave_released (sensor) >> <class probes>
    [wave, release_gate, observe, probes] >> collect_evidence (all_done) >> validate >> publish_evidence
    collect_evidence >> cleanup (all_done, ends the lease; beside validate) >> verdict (with validate)

Exclusive GPUs: test classes of the same ``gpu_group`` must not hold GPUs, nor quota, at the same time.
Gated pods hold no GPU but count against ResourceQuota from their creation, so a class takes the group's
lease before its wave is even submitted: ``hold_cluster`` runs in the group's pool of ONE slot with
``include_deferred`` and stays deferred (holding the slot, no worker) until the run's ``cleanup`` writes its
done marker (``gpupoc.dags.lease``). Sensors wait deferred, so a class waiting for its turn holds no executor
slot and classes triggered together cannot starve each other of workers on 2 cores.
``max_active_runs=1`` keeps two runs of one class apart as well.

Parse time does no cluster, Prometheus or GX call: it reads the plan file (``$GPUPOC_PLAN``) for the
window, the GPU group and the retries only.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import Any, Callable

from airflow.sdk import DAG, Param

from gpupoc.dags import tasks as T
from gpupoc.dags.assets import evidence_asset
from gpupoc.dags.lease import GpuLeaseOperator, MarkerFileSensor
from gpupoc.dags.operator import GpuWorkloadOperator
from gpupoc.dags.service_operators import (
    ServiceLoadOperator,
    TenantCreateResourceOperator,
    TenantDeleteResourceOperator,
)
from gpupoc.pipeline.common import cluster_pool, default_plan_path
from gpupoc.steps.markers import LEASE_FILE, RELEASE_FILE
from gpupoc.classes.registry import definition

log = logging.getLogger(__name__)
# How long observers and probes may wait (rescheduled, holding no worker) for this class's turn on the cluster.
WAIT_FOR_CLUSTER_SECONDS = 3 * 3600
# ... first looked for on the sensor's worker this long: a free lease is taken by hold_cluster within a second
LEASE_INLINE_SECONDS = 3.0
FALLBACK_START = datetime(2026, 1, 1, tzinfo=timezone.utc)
# A preempted or evicted wave pod is submitted again this soon (a user's retry, not a backoff).
WAVE_RETRY_DELAY_SECONDS = 5
# The plan every task reads: the run's plan file with its chosen platform (gpupoc.plan.platforms.plan_ref).
PLAN_REF = "{{ params.plan }}{% if params.platform %}#{{ params.platform }}{% endif %}"


@dataclass(frozen=True)
class ParseSettings:
    """What a DAG needs from the plan at parse time; defaults when the plan cannot be read."""

    plan_file: str
    schedule: str | None
    start: datetime
    end: datetime | None
    gpu_group: str = "gpus"
    wave_retries: int = 0
    reviewers: tuple[str, ...] = ()
    problem: str = ""


def parse_settings(test_class: str) -> ParseSettings:
    """Read the plan's window and the class's GPU group; an invalid plan gives an unscheduled DAG whose
    ``validate_plan`` task then reports every problem with its path."""
    path = str(default_plan_path())
    try:
        from gpupoc.plan import load_plan_file

        plan = load_plan_file(path)
        spec = plan.test_class(test_class)
        w = plan.window
        retries = spec.resubmission.limit  # a preempted or evicted pod is submitted again by an Airflow retry
        return ParseSettings(path, w.schedule, w.aware(w.start), w.aware(w.end), spec.gpu_group or "gpus", retries,
                             tuple(r.name for r in plan.report.reviewers))
    except Exception as exc:  # noqa: BLE001 - the DAG must still import; validate_plan reports the problem
        first = str(exc).splitlines()[0][:300]
        log.warning("plan %s not usable at parse time: %s", path, first)
        return ParseSettings(path, None, FALLBACK_START, None, problem=first)


def _params(s: ParseSettings) -> dict[str, Param]:
    """The trigger form of a class DAG: the plan, a note on faults, the reviewers, free notes."""
    return {
        "plan": Param(s.plan_file, type="string", title="POC plan",
                      description="path of the plan YAML (relative paths: against the repository)"),
        "platform": Param("", type="string", title="Platform",
                          description="one of the plan's platforms (its name); empty: the plan's platform block"),
        "faults_note": Param("", type="string", title="Faults note",
                             description="fault profile of the cluster or what was injected by hand"),
        "reviewers": Param(list(s.reviewers), type="array", title="Reviewers",
                           description="who reviews this run's evidence"),
        "notes": Param("", type="string", title="Notes"),
    }


def build_dag(test_class: str, doc_md: str) -> DAG:
    """The DAG ``poc_<test_class>``: the shared steps plus the class's probes, built from ``TASKS`` and wired
    by ``AFTER``."""
    s = parse_settings(test_class)
    class_def = definition(test_class)
    doc = doc_md + (f"\n\n**Plan problem at parse time:** {s.problem}" if s.problem else "")
    with DAG(
        dag_id=f"poc_{test_class}",
        doc_md=doc,
        schedule=s.schedule,
        start_date=s.start,
        end_date=s.end,
        catchup=False,
        max_active_runs=1,
        tags=["gpupoc", "poc", *class_def.tags],
        default_args={"owner": "gpupoc", "retries": 1, "retry_delay": timedelta(seconds=10)},
        params=_params(s),
    ) as dag:
        built = Built(s, test_class, {})
        for name, builder in TASKS:
            built.tasks[name] = builder(built)
        for before, after in AFTER:
            for upstream in built.many(before):
                upstream >> built.many(after)
    return dag


@dataclass
class Built:
    """The tasks of one class DAG built so far, by name (a name may stand for several tasks: the probes)."""

    settings: ParseSettings
    test_class: str
    tasks: dict[str, Any]

    @property
    def v(self) -> Any:
        """``validate_plan``'s result, which every task reads."""
        return self.tasks["validate_plan"]

    def many(self, names: str | tuple[str, ...]) -> list[Any]:
        out: list[Any] = []
        for name in (names,) if isinstance(names, str) else names:
            task_or_tasks = self.tasks[name]
            out += task_or_tasks if isinstance(task_or_tasks, list) else [task_or_tasks]
        return out


def _operator_args(b: Built) -> dict[str, Any]:
    return {"plan_path": PLAN_REF, "test_class": b.test_class}


def _hold_cluster(b: Built) -> Any:
    return GpuLeaseOperator(task_id="hold_cluster", pool=cluster_pool(b.settings.gpu_group), pool_slots=1,
                                retries=1, **_operator_args(b))


def _marker_sensor(task_id: str, marker: str, **timing: float) -> Callable[[Built], Any]:
    def build(b: Built) -> Any:
        return MarkerFileSensor(task_id=task_id, marker=marker, timeout_seconds=WAIT_FOR_CLUSTER_SECONDS,
                                **timing, **_operator_args(b))

    return build


def _wave(b: Built) -> Any:
    return GpuWorkloadOperator.partial(
        task_id="wave", wave_gate=True, retries=b.settings.wave_retries,
        retry_delay=timedelta(seconds=WAVE_RETRY_DELAY_SECONDS), **_operator_args(b),
    ).expand_kwargs(b.tasks["prepare_wave"])


def _service_operator(operator: type, task_id: str, over: str, **kwargs: Any) -> Callable[[Built], Any]:
    """A mapped service task (one per service, mapped over nothing when the class deploys none)."""

    def build(b: Built) -> Any:
        return operator.partial(task_id=task_id, **kwargs, **_operator_args(b)).expand_kwargs(b.tasks[over])

    return build


def _publish_evidence(b: Built) -> Any:
    return T.publish_evidence.override(outlets=[evidence_asset(b.test_class)])(
        b.tasks["collect_evidence"], b.tasks["validate"])


# Every task of a class DAG, in the order they are built: (task id, builder). A task's data (``v``, the wave's
# items, the services' manifests) is its builder's argument; the order it needs beyond its data is in AFTER.
TASKS: tuple[tuple[str, Callable[[Built], Any]], ...] = (
    ("validate_plan", lambda b: T.validate_plan()),
    ("preflight", lambda b: T.preflight(b.v)),
    ("check_access", lambda b: T.check_access(b.v)),
    ("hold_cluster", _hold_cluster),
    ("cluster_acquired", _marker_sensor("cluster_acquired", LEASE_FILE, inline_seconds=LEASE_INLINE_SECONDS)),
    # the class's services, as users deploy them: created by the provider's KubernetesCreateResourceOperator
    # as their tenant once the lease is held, rolled out before the wave's release, loaded by a
    # KubernetesPodOperator each, observed every second, and deleted by KubernetesDeleteResourceOperator before
    # the evidence is collected (the audit class judges that delete); they are up before the wave is submitted
    ("prepare_services", lambda b: T.prepare_services(b.v)),
    ("deploy_service", _service_operator(TenantCreateResourceOperator, "deploy_service", "prepare_services")),
    ("services_ready", lambda b: T.services_ready(b.v)),
    ("service_traffic", _service_operator(ServiceLoadOperator, "service_traffic", "services_ready", retries=0)),
    ("observe_services", lambda b: T.observe_services(b.v)),
    ("prepare_wave", lambda b: T.prepare_wave(b.v)),
    ("wave", _wave),
    # shards cut from the plan, beside the checks
    ("bulk_shard", lambda b: T.bulk_shard.partial(v=b.v).expand(shard=T.bulk_shards(b.v))),
    ("release_gate", lambda b: T.release_gate(b.v)),
    ("wave_released", _marker_sensor("wave_released", RELEASE_FILE, poll_seconds=1.0)),
    ("observe", lambda b: T.observe(b.v)),
    ("probes", lambda b: [T.probe_task(task_id, step)(b.v) for task_id, step in definition(b.test_class).probes]),
    ("delete_service", _service_operator(TenantDeleteResourceOperator, "delete_service", "prepare_services",
                                         trigger_rule="all_done")),
    ("collect_evidence", lambda b: T.collect_evidence(b.v)),
    ("validate", lambda b: T.validate(b.v, b.tasks["collect_evidence"])),
    ("publish_evidence", _publish_evidence),
    ("cleanup", lambda b: T.cleanup(b.v)),
    ("verdict", lambda b: T.verdict(b.tasks["validate"])),
)

# (before, after): the order beyond the data each task reads, in the table's order.
AFTER: tuple[tuple[str | tuple[str, ...], str | tuple[str, ...]], ...] = (
    ("validate_plan", ("cluster_acquired", "wave_released")),
    ("preflight", "check_access"),  # a missing prerequisite fails before anything is submitted
    ("check_access", ("hold_cluster", "cluster_acquired")),
    ("cluster_acquired", ("deploy_service", "prepare_wave", "release_gate", "wave_released", "observe")),
    ("deploy_service", ("services_ready", "observe_services")),
    # the services are up (and their traffic starting) before the wave is submitted: a queue that admits gated
    # pods (Kueue) would otherwise hand their quota to the wave and preempt it for the services
    ("services_ready", ("prepare_wave", "release_gate")),
    (("service_traffic", "observe_services"), "delete_service"),
    ("prepare_wave", "bulk_shard"),  # the shard tasks start once the gangs exist
    ("wave_released", "probes"),
    (("wave", "bulk_shard", "release_gate", "observe", "probes", "delete_service"), "collect_evidence"),
    # the pods are deleted and the lease ends once the evidence is collected: validating needs neither
    ("collect_evidence", "cleanup"),
    # the verdict does not wait for the triggerer to see the lease's end: the run ends once both have
    ("cleanup", "verdict"),
)
