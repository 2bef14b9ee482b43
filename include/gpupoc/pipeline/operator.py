"""``GpuWorkloadOperator``: a ``KubernetesPodOperator`` whose pod comes from the POC plan.

A mapped task receives only ``workload_key``, ``name``, ``namespace`` and ``cluster_context``; the pod itself
is built in ``build_pod_request_obj`` from the plan (``plan_path``, a template field) by the pure
``gpupoc.podspec`` functions, so no task fetches the whole catalogue from XCom. A pod that succeeds ends its
task in the triggerer (``WavePodTrigger``). Any other outcome resumes the task in a fresh operator:
``trigger_reentry`` restores the tenant's identity (kubeconfig and context) from the plan before it reads
the pod, its logs and its events.
"""

from __future__ import annotations

import os
from functools import lru_cache
from typing import Any

from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from airflow.providers.cncf.kubernetes.triggers.pod import KubernetesPodTrigger
from airflow.triggers.base import TaskSuccessEvent

from gpupoc.exceptions import ConfigError
from gpupoc.podspec.kpo import KPO_DEFAULTS

# Attributes of the operator that kpo_kwargs() decides per workload.
_POD_FIELDS = ("namespace", "image", "cmds", "arguments", "labels", "annotations", "node_selector",
               "priority_class_name", "schedulername", "active_deadline_seconds", "env_vars", "tolerations",
               "container_resources", "full_pod_spec", "startup_timeout_seconds")
_IDENTITY_FIELDS = ("config_file", "cluster_context", "in_cluster", "kubernetes_conn_id")


@lru_cache(maxsize=8)
def _load_plan_cached(path: str, mtime: float):
    from gpupoc.plan import load_plan

    return load_plan(path)


def load_plan_file(path: str | os.PathLike):
    """The checked plan at ``path`` (cached per file modification time within one process)."""
    p = os.fspath(path)
    try:
        mtime = os.stat(p).st_mtime
    except OSError:
        raise ConfigError(p, ["(file): POC plan not found; set the run's `plan` parameter or GPUPOC_PLAN "
                              "to an existing plan file"]) from None
    return _load_plan_cached(p, mtime)


def find_item(plan, test_class: str, workload_key: str):
    """The wave item named ``workload_key`` in ``test_class``; ConfigError naming the known keys otherwise."""
    from gpupoc.plan import class_items

    items = class_items(plan, test_class)
    for item in items:
        if item.name == workload_key:
            return item
    known = ", ".join(i.name for i in items[:10]) + (" ..." if len(items) > 10 else "")
    raise ConfigError(f"test_classes.{test_class}", [
        f"workload_key: no wave item {workload_key!r} in this plan (known: {known}); the plan changed "
        "after the wave was prepared: rerun the run from prepare_wave"])


class WavePodTrigger(KubernetesPodTrigger):
    """The operator's pod trigger, except that a pod that succeeded ends its task here, in the triggerer.

    Resuming a task on a worker only to read a successful pod back costs a task start-up per pod (a median
    18 s per task for 200 tasks on 2 cores, ``bench/orchestration_overhead.py``). The pod is kept
    (``on_finish_action`` keep_pod) and its log stays on the platform; the last lines go to this task's log
    here. Any other outcome (failure, timeout, error) resumes the task as usual.
    """

    LOG_TAIL_LINES = 20

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return ("gpupoc.pipeline.operator.WavePodTrigger", super().serialize()[1])

    async def run(self):
        async for event in super().run():
            if event.payload.get("status") != "success":
                yield event
                continue
            try:
                lines = await self.hook.read_logs(name=self.pod_name, namespace=self.pod_namespace,
                                                  container_name=self.base_container_name)
                for line in lines[-self.LOG_TAIL_LINES:]:
                    self.log.info("[pod %s] %s", self.pod_name, str(line).rstrip())
            except Exception as exc:  # noqa: BLE001 - the log stays on the platform; the task still succeeded
                self.log.info("pod %s succeeded; its log could not be read here: %s", self.pod_name, exc)
            self.log.info("pod %s/%s succeeded: the task ends in the triggerer", self.pod_namespace, self.pod_name)
            yield TaskSuccessEvent()


class GpuWorkloadOperator(KubernetesPodOperator):
    """Runs one wave item of a test class as its tenant; the pod is built from the plan, gated if asked."""

    template_fields = (*KubernetesPodOperator.template_fields, "plan_path", "workload_key")

    def __init__(self, *, workload_key: str, plan_path: str, test_class: str, wave_gate: bool = True,
                 **kwargs: Any) -> None:
        for key, value in KPO_DEFAULTS.items():
            kwargs.setdefault(key, value)
        super().__init__(**kwargs)
        self.workload_key = workload_key
        self.plan_path = plan_path
        self.test_class = test_class
        self.wave_gate = wave_gate

    def _plan_kwargs(self, run_id: str) -> dict[str, Any]:
        from gpupoc.podspec.kpo import kpo_kwargs

        from gpupoc.pipeline.common import plan_path

        plan = load_plan_file(plan_path(self.plan_path))
        item = find_item(plan, self.test_class, self.workload_key)
        return kpo_kwargs(plan.workload(item.workload), plan.tenant(item.tenant), plan, run_id=run_id,
                          test_class=self.test_class, wave_gate=self.wave_gate, name=item.name,
                          priority_class=item.priority_class, role=item.role)

    def _apply(self, kwargs: dict[str, Any], fields: tuple[str, ...]) -> None:
        for f in fields:
            if f in kwargs:
                setattr(self, f, kwargs[f])
        if "startup_timeout_seconds" in fields and "startup_timeout_seconds" in kwargs:
            self.schedule_timeout_seconds = kwargs["startup_timeout_seconds"]

    def _restore_identity(self, run_id: str) -> None:
        """Set kubeconfig and context from the plan, then drop clients built with other credentials."""
        self._apply(self._plan_kwargs(run_id), _IDENTITY_FIELDS)
        for cached in ("hook", "client", "pod_manager"):
            self.__dict__.pop(cached, None)

    def build_pod_request_obj(self, context: Any = None, *, dry_run: bool = False):
        """The plan's pod for this item, plus the labels Airflow adds to find it again after a restart."""
        run_id = context["run_id"] if context else "dry-run"
        kwargs = self._plan_kwargs(run_id)
        self._apply(kwargs, _POD_FIELDS + _IDENTITY_FIELDS)
        for cached in ("hook", "client", "pod_manager"):
            self.__dict__.pop(cached, None)
        self.name = self._set_name(kwargs.get("name") or self.name)
        return super().build_pod_request_obj(context, dry_run=dry_run)

    def defer(self, *, trigger, method_name: str, kwargs: dict[str, Any] | None = None, timeout=None):
        """Wait with ``WavePodTrigger``: a pod that succeeded ends the task without a resume on a worker."""
        if type(trigger) is KubernetesPodTrigger:
            trigger = WavePodTrigger(**trigger.serialize()[1])
        super().defer(trigger=trigger, method_name=method_name, kwargs=kwargs, timeout=timeout)

    def trigger_reentry(self, context: Any, event: dict[str, Any]) -> Any:
        self._restore_identity(context["run_id"])
        return super().trigger_reentry(context, event)
