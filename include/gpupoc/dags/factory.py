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
        >> cleanup (all_done, ends the lease) >> verdict (with hold_cluster)

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

from airflow.sdk import DAG, Param, get_current_context, task

from gpupoc.dags.assets import evidence_asset
from gpupoc.dags.lease import ClusterLeaseOperator, MarkerFileSensor
from gpupoc.dags.operator import GpuWorkloadOperator
from gpupoc.pipeline.common import cluster_pool, default_plan_path
from gpupoc.steps.markers import LEASE_FILE, RELEASE_FILE
from gpupoc.steps.profiles import profile

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


def _ctx(v: dict, task_id: str):
    from gpupoc.steps.context import RunContext

    c = get_current_context()
    return RunContext(v["plan"], c["dag"].dag_id, c["run_id"], c["dag"].dag_id.removeprefix("poc_"), task=task_id)


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
    """The DAG ``poc_<test_class>``: the shared steps plus the class's probes."""
    s = parse_settings(test_class)
    pool = cluster_pool(s.gpu_group)
    asset = evidence_asset(test_class)
    prof = profile(test_class)
    doc = doc_md + (f"\n\n**Plan problem at parse time:** {s.problem}" if s.problem else "")
    with DAG(
        dag_id=f"poc_{test_class}",
        doc_md=doc,
        schedule=s.schedule,
        start_date=s.start,
        end_date=s.end,
        catchup=False,
        max_active_runs=1,
        tags=["gpupoc", "poc", *prof.tags],
        default_args={"owner": "gpupoc", "retries": 1, "retry_delay": timedelta(seconds=10)},
        params=_params(s),
    ) as dag:

        @task
        def validate_plan() -> dict:
            from gpupoc.steps import setup

            c = get_current_context()
            return setup.validate_plan(c["params"].get("plan"), c["dag"].dag_id, c["run_id"], test_class,
                                       dict(c["params"]), platform=c["params"].get("platform"))

        @task(retries=0)
        def preflight(v: dict) -> dict:
            from gpupoc.steps import preflight as preflight_steps

            return preflight_steps.preflight(_ctx(v, "preflight"))

        @task
        def check_access(v: dict) -> dict:
            from gpupoc.steps import setup

            return setup.check_access(_ctx(v, "check_access"))

        @task
        def prepare_wave(v: dict) -> list[dict]:
            from gpupoc.steps.gangs import create_pod_groups

            from gpupoc.steps.bulk import operator_items

            ctx = _ctx(v, "prepare_wave")
            create_pod_groups(ctx)  # Volcano and KAI gangs need their PodGroup before their pods
            return operator_items(ctx)  # none when the wave goes in bulk shards

        @task
        def bulk_shards(v: dict) -> list[dict]:
            from airflow.configuration import conf

            from gpupoc.steps.bulk import shards

            slots = min(conf.getint("core", "parallelism"), conf.getint("core", "max_active_tasks_per_dag"))
            return shards(_ctx(v, "bulk_shards"), slots)  # none when the operator submits the wave

        @task(retries=0)  # a retry would submit the shard's items a second time
        def bulk_shard(v: dict, shard: dict) -> dict:
            from gpupoc.steps.bulk import submit_shard

            return submit_shard(_ctx(v, "bulk_shard"), shard)

        @task(retries=2)
        def release_gate(v: dict) -> dict:
            from gpupoc.dags.task_states import bulk_task_states, wave_task_states
            from gpupoc.steps import bulk as bulk_steps
            from gpupoc.steps import wave as wave_steps

            ctx = _ctx(v, "release_gate")  # an item whose wave (or shard) task ended is never waited for
            shards = bulk_steps.shards(ctx)
            states = (bulk_task_states(shards) if shards
                      else wave_task_states([i["workload_key"] for i in ctx.items]))
            return wave_steps.release_gate(ctx, task_states=states)

        @task(retries=2)
        def observe(v: dict) -> dict:
            from gpupoc.dags.task_states import bulk_task_states, wave_task_states
            from gpupoc.steps import bulk as bulk_steps
            from gpupoc.steps import wave as wave_steps

            ctx = _ctx(v, "observe")  # an item whose wave (or shard) task ended is never waited for
            shards = bulk_steps.shards(ctx)
            states = (bulk_task_states(shards) if shards
                      else wave_task_states([i["workload_key"] for i in ctx.items]))
            return wave_steps.observe(ctx, states)

        @task
        def prepare_services(v: dict) -> list[dict]:
            from gpupoc.steps.services import resource_kwargs

            return resource_kwargs(_ctx(v, "prepare_services"))  # none when the class deploys no service

        # never fails, and runs after a skipped or failed create: a service that did not roll out is recorded
        # and judged, and the wave's release (downstream) goes ahead
        @task(retries=0, trigger_rule="all_done")
        def services_ready(v: dict) -> list[dict]:
            from gpupoc.steps.services import await_rollout, load_kwargs
            from gpupoc.steps.wave_end import preflight_refused

            ctx = _ctx(v, "services_ready")
            if preflight_refused(ctx):
                return []  # nothing was deployed: no rollout to await, no traffic to send
            await_rollout(ctx)
            return load_kwargs(ctx)

        @task(retries=2, trigger_rule="all_done")
        def observe_services(v: dict) -> dict:
            from gpupoc.steps.service_observer import observe_services as observe

            return observe(_ctx(v, "observe_services"))

        @task(trigger_rule="all_done")
        def collect_evidence(v: dict) -> dict:
            from gpupoc.steps import collect

            return collect.collect(_ctx(v, "collect_evidence"), v.get("started_at"))

        @task
        def validate(v: dict, collected: dict) -> dict:
            from gpupoc.steps import finish

            return finish.validate(_ctx(v, "validate"), collected["run_dir"])

        @task(outlets=[asset])
        def publish_evidence(collected: dict, validation: dict) -> dict:
            c = get_current_context()
            extra = {"run_dir": collected["run_dir"], "dag_id": c["dag"].dag_id, "run_id": c["run_id"],
                     "success": bool(validation.get("success")), "failed_checks": validation.get("failed_checks", [])}
            c["outlet_events"][asset].extra = extra
            return extra

        @task(trigger_rule="all_done")
        def cleanup(v: dict) -> dict:
            from gpupoc.steps import finish

            return finish.cleanup(_ctx(v, "cleanup"))

        @task(retries=0)
        def verdict(validation: dict) -> None:
            from gpupoc.steps import finish

            finish.verdict(validation)

        v = validate_plan()
        pre = preflight(v)
        access = check_access(v)
        pre >> access
        hold = ClusterLeaseOperator(task_id="hold_cluster", plan_path=PLAN_REF, test_class=test_class,
                                    pool=pool, pool_slots=1, retries=1)
        acquired = MarkerFileSensor(task_id="cluster_acquired", plan_path=PLAN_REF, test_class=test_class,
                                    marker=LEASE_FILE, timeout_seconds=WAIT_FOR_CLUSTER_SECONDS,
                                    inline_seconds=LEASE_INLINE_SECONDS)
        v >> acquired
        access >> [hold, acquired]
        items = prepare_wave(v)
        wave = GpuWorkloadOperator.partial(
            task_id="wave", plan_path=PLAN_REF, test_class=test_class, wave_gate=True,
            retries=s.wave_retries, retry_delay=timedelta(seconds=WAVE_RETRY_DELAY_SECONDS),
        ).expand_kwargs(items)
        bulk = bulk_shard.partial(v=v).expand(shard=bulk_shards(v))  # shards cut from the plan, beside the checks
        acquired >> items >> bulk  # the shard tasks start once the gangs exist
        rel = release_gate(v)
        acquired >> rel
        released = MarkerFileSensor(task_id="wave_released", plan_path=PLAN_REF, test_class=test_class,
                                    marker=RELEASE_FILE, poll_seconds=1.0, timeout_seconds=WAIT_FOR_CLUSTER_SECONDS)
        v >> released
        svc_docs, svc_ready, svc_done = _service_tasks(v, acquired, prepare_services, services_ready,
                                                       observe_services, test_class)
        # the services are up (and their traffic starting) before the wave is submitted: a queue that admits
        # gated pods (Kueue) would otherwise hand their quota to the wave and preempt it for the services
        svc_ready >> [items, rel]
        obs = observe(v)
        acquired >> obs  # observing starts before the release: no wait goes unseen
        probes = [_probe_task(task_id, step)(v) for task_id, step in prof.probes]
        acquired >> released
        released >> probes
        side = [rel, obs, *probes]
        collected = collect_evidence(v)
        [wave, bulk, *side, *svc_done] >> collected
        val = validate(v, collected)
        pub = publish_evidence(collected, val)
        clean = cleanup(v)
        pub >> clean
        [clean, hold] >> verdict(val)
    return dag


def _service_tasks(v, acquired, prepare_services, services_ready, observe_services, test_class: str):
    """The class's services, as users deploy them: created by the provider's KubernetesCreateResourceOperator
    (mapped, one per service, as its tenant), rolled out before the wave's release, loaded by a
    KubernetesPodOperator each, observed every second, and deleted by KubernetesDeleteResourceOperator before
    the evidence is collected (the audit class judges that delete). Every mapped task maps over nothing when
    the class deploys no service. Returns (the manifests task, the rollout task, the tasks the collection
    follows)."""
    from gpupoc.dags.service_operators import (ServiceLoadOperator, TenantCreateResourceOperator,
                                               TenantDeleteResourceOperator)

    docs = prepare_services(v)  # from the plan alone, beside the checks; deployed once the lease is held
    deploy = TenantCreateResourceOperator.partial(task_id="deploy_service", plan_path=PLAN_REF,
                                                  test_class=test_class).expand_kwargs(docs)
    acquired >> deploy
    ready = services_ready(v)
    deploy >> ready
    load = ServiceLoadOperator.partial(task_id="service_traffic", plan_path=PLAN_REF, test_class=test_class,
                                       retries=0).expand_kwargs(ready)
    watched = observe_services(v)
    deploy >> watched
    delete = TenantDeleteResourceOperator.partial(task_id="delete_service", plan_path=PLAN_REF, test_class=test_class,
                                                  trigger_rule="all_done").expand_kwargs(docs)
    [watched, load] >> delete
    return docs, ready, [delete]


def _probe_task(task_id: str, step):
    """A task that runs one class probe step with the run's context."""

    @task(task_id=task_id)
    def probe(v: dict) -> dict:
        return step(_ctx(v, task_id))

    return probe
