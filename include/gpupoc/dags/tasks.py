"""The class DAGs' Python tasks: each reads the run's context and calls one pipeline step.

Every task is declared once here and placed in each class DAG by ``factory.TASKS``. A task learns its class
from its DAG id (``poc_<class>``) and its plan from ``validate_plan``'s result (``v``), so the same task serves
all five classes. Heavy imports stay inside the tasks: parsing a DAG file calls nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from airflow.sdk import get_current_context, task

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext


def _ctx(v: dict, task_id: str, same_plan: bool = True) -> RunContext:
    """This task's run context from the run's spec (``validate_plan``'s result): its plan, the DAG's class, the
    run's id. With ``same_plan`` a plan file edited since the run started is refused (``cleanup`` goes on: it
    ends the lease whatever the plan says)."""
    from gpupoc.common.gc_pace import pace_for_large_data
    from gpupoc.plan import plan_hash
    from gpupoc.steps.context import run_context
    from gpupoc.steps.run_spec import RunSpec, plan_unchanged

    pace_for_large_data()  # this task's process: a wave's pods and events are millions of objects it keeps
    spec = RunSpec.from_dict(v)
    c = get_current_context()
    ctx = run_context(spec.plan, c["dag"].dag_id, c["run_id"], task=task_id)
    if same_plan:
        plan_unchanged(spec, plan_hash(ctx.plan))
    return ctx


def _wave_task_states(ctx: RunContext):
    """The states of the wave's (or its bulk shards') tasks: an item whose task ended is never waited for."""
    from gpupoc.dags.task_states import bulk_task_states, wave_task_states
    from gpupoc.steps import bulk as bulk_steps

    shards = bulk_steps.shards(ctx)
    return bulk_task_states(shards) if shards else wave_task_states([i["workload_key"] for i in ctx.items])


@task
def validate_plan() -> dict:
    from gpupoc.steps import setup

    c = get_current_context()
    dag_id = c["dag"].dag_id
    return setup.validate_plan(c["params"].get("plan"), dag_id, c["run_id"], dag_id.removeprefix("poc_"),
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
    from gpupoc.steps.bulk import operator_items
    from gpupoc.steps.gangs import create_pod_groups

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
    from gpupoc.steps import wave as wave_steps

    ctx = _ctx(v, "release_gate")
    return wave_steps.release_gate(ctx, task_states=_wave_task_states(ctx))


@task(retries=2)
def observe(v: dict) -> dict:
    from gpupoc.steps import wave as wave_steps

    ctx = _ctx(v, "observe")
    return wave_steps.observe(ctx, _wave_task_states(ctx))


@task
def prepare_services(v: dict) -> list[dict]:
    from gpupoc.steps.services import resource_kwargs

    return resource_kwargs(_ctx(v, "prepare_services"))  # none when the class deploys no service


# never fails, and runs after a skipped or failed create: a service that did not roll out is recorded and
# judged, and the wave's release (downstream) goes ahead
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
    from gpupoc.steps import service_observer

    return service_observer.observe_services(_ctx(v, "observe_services"))


@task(trigger_rule="all_done")
def collect_evidence(v: dict) -> dict:
    from gpupoc.steps import collect

    return collect.collect(_ctx(v, "collect_evidence"), v.get("started_at"))


@task
def validate(v: dict, collected: dict) -> dict:
    from gpupoc.steps import finish

    return finish.validate(_ctx(v, "validate"), collected["run_dir"])


@task  # its outlet, the class's evidence Asset, is set per DAG (factory.TASKS)
def publish_evidence(collected: dict, validation: dict) -> dict:
    from gpupoc.dags.assets import evidence_asset

    c = get_current_context()
    dag_id = c["dag"].dag_id
    extra = {"run_dir": collected["run_dir"], "dag_id": dag_id, "run_id": c["run_id"],
             "success": bool(validation.get("success")), "failed_checks": validation.get("failed_checks", [])}
    c["outlet_events"][evidence_asset(dag_id.removeprefix("poc_"))].extra = extra
    return extra


@task(trigger_rule="all_done")
def cleanup(v: dict) -> dict:
    from gpupoc.steps import finish

    return finish.cleanup(_ctx(v, "cleanup", same_plan=False))


@task(retries=0)
def verdict(validation: dict) -> None:
    from gpupoc.steps import finish

    finish.verdict(validation)


def probe_task(task_id: str, step: Callable[..., dict]):
    """A task that runs one class probe step with the run's context."""

    @task(task_id=task_id)
    def probe(v: dict) -> dict:
        return step(_ctx(v, task_id))

    return probe
