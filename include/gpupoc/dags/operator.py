"""``GpuWorkloadOperator``: a ``KubernetesPodOperator`` whose pod comes from the POC plan.

A mapped task receives only ``workload_key``, ``name``, ``namespace`` and ``cluster_context``; the pod itself
is built in ``build_pod_request_obj`` from the plan (``plan_path``, a template field) by the pure
``gpupoc.podspec`` functions, so no task fetches the whole catalogue from XCom. A pod that succeeds ends its
task in the triggerer (``WavePodTrigger``). Any other outcome resumes the task in a fresh operator:
``trigger_reentry`` restores the tenant's identity (kubeconfig and context) from the plan before it reads
the pod, its logs and its events.
"""

from __future__ import annotations

import time
from functools import cached_property
from typing import TYPE_CHECKING, Any, NoReturn

from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from airflow.providers.cncf.kubernetes.triggers.pod import KubernetesPodTrigger
from airflow.sdk.exceptions import AirflowException, AirflowFailException
from airflow.triggers.base import TaskSuccessEvent

from gpupoc.dags.finished_logs import FinishedLogsMixin
from gpupoc.plan import find_item, load_plan_file
from gpupoc.podspec.kpo import KPO_DEFAULTS

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext

# Attributes of the operator that kpo_kwargs() decides per workload.
_POD_FIELDS = ("namespace", "image", "cmds", "arguments", "labels", "annotations", "node_selector",
               "priority_class_name", "schedulername", "active_deadline_seconds", "env_vars", "tolerations",
               "container_resources", "full_pod_spec", "startup_timeout_seconds")
_IDENTITY_FIELDS = ("config_file", "cluster_context", "in_cluster", "kubernetes_conn_id")


class AttemptEnded(AirflowException):
    """The task's pod ended and another attempt follows (Airflow's retry makes it); says the task's decision."""


class WavePodTrigger(KubernetesPodTrigger):
    """The operator's pod trigger, except that a pod that succeeded ends its task here, in the triggerer.

    Resuming a task on a worker only to read a successful pod back costs a task start-up per pod (a median
    18 s per task for 200 tasks on 2 cores, ``bench/orchestration_overhead.py``). The pod is kept
    (``on_finish_action`` keep_pod) and its log stays on the platform; the last lines go to this task's log
    here. Any other outcome (failure, timeout, error) resumes the task as usual.
    """

    LOG_TAIL_LINES = 20

    def __init__(self, *args: Any, label_selector: str = "", **kwargs: Any):
        super().__init__(*args, **kwargs)
        self.label_selector = label_selector

    def serialize(self) -> tuple[str, dict[str, Any]]:
        return ("gpupoc.dags.operator.WavePodTrigger",
                {**super().serialize()[1], "label_selector": self.label_selector})

    @cached_property
    def hook(self):
        """With the run's label selector, pods are read from one shared list per namespace (``pod_cache``)."""
        if not self.label_selector:
            return super().hook
        from gpupoc.dags.pod_cache import SharedPodHook

        return SharedPodHook(conn_id=self.kubernetes_conn_id, in_cluster=self.in_cluster,
                             config_dict=self.config_dict, cluster_context=self.cluster_context,
                             connection_extras=self.connection_extras, label_selector=self.label_selector,
                             max_age=float(min(self.poll_interval, self.startup_check_interval)),
                             started=self.trigger_start_time.timestamp())

    async def on_kill(self) -> None:
        """Delete the pod only when its task has left the deferred state (a user marked or cleared it).

        Airflow 3.3's triggerer cancels a trigger that moved to another triggerer (a triggerer taken for dead
        under load, or its peer in a two-triggerer deployment) the way it cancels a user's action, and the
        provider's ``on_kill`` then deletes a pod its task still waits for: the task resumes to "not found
        after resuming from deferral". While the task is still deferred, the trigger running elsewhere owns
        the pod, so it is kept (``safe_to_cancel``: the provider's own test for a triggerer restart)."""
        try:
            moved = not await self.safe_to_cancel()
        except Exception as exc:  # noqa: BLE001 - unknown state: keeping a pod loses nothing, the cleanup task ends it
            self.log.warning("pod %s/%s kept: its task's state could not be read (%s)", self.pod_namespace,
                             self.pod_name, exc)
            return
        if moved:
            self.log.info("pod %s/%s kept: its task is still deferred (the trigger moved to another triggerer)",
                          self.pod_namespace, self.pod_name)
            return
        await super().on_kill()

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


class GpuWorkloadOperator(FinishedLogsMixin, KubernetesPodOperator):
    """Runs one wave item of a test class as its tenant; the pod is built from the plan, gated if asked.

    Every pod it submits (or whose creation is refused) is recorded in the run's evidence
    (``files/submission-*.json``), so an attempt the platform removes between two snapshots is still known.
    How the pod ended is decided once, from the records the evidence reads (``steps.attempt_decision``), and
    recorded for the observer: a pod the platform preempted or evicted fails the task so that Airflow retries
    it (the plan's ``resubmission.limit`` is the task's retries); a retry after the wave's release submits the
    pod without the gate. Any other outcome fails the task for good (no retry), naming the record that says
    why.
    """

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

    def _plan(self):
        from gpupoc.pipeline.common import plan_path

        return load_plan_file(plan_path(self.plan_path))

    def _writer(self, context: Any):
        from gpupoc.evidence import EvidenceWriter

        return EvidenceWriter(self._plan().evidence_root_path, context["ti"].dag_id, context["run_id"])

    def _released(self, context: Any) -> bool:
        """The wave's release has begun: a resubmission must not wait for a release that is over."""
        from gpupoc.steps.markers import RELEASE_BEGUN

        files = self._writer(context).files_dir if context else None
        return files is not None and any((files / f"{m}.json").is_file() for m in RELEASE_BEGUN)

    def _plan_kwargs(self, run_id: str, gated: bool | None = None) -> dict[str, Any]:
        from gpupoc.plan.overrides import item_workload
        from gpupoc.podspec.kpo import kpo_kwargs

        plan = self._plan()
        item = find_item(plan, self.test_class, self.workload_key)
        return kpo_kwargs(item_workload(plan, item), plan.tenant(item.tenant), plan, run_id=run_id,
                          test_class=self.test_class, wave_gate=self.wave_gate if gated is None else gated,
                          name=item.name, priority_class=item.priority_class, role=item.role)

    def _record(self, context: Any, pod_name: str | None, namespace: str, rejection=None) -> None:
        from datetime import datetime, timezone

        from gpupoc.pipeline.attempts import Submission

        try_number = int(getattr(context["ti"], "try_number", 1) or 1)
        sub = Submission(self.workload_key, namespace, pod_name, datetime.now(timezone.utc), try_number, rejection)
        self._writer(context).write_json(f"submission-{self.workload_key}-try{try_number}", sub.to_dict())

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
        kwargs = self._plan_kwargs(run_id, gated=self.wave_gate and not self._released(context))
        self._apply(kwargs, _POD_FIELDS + _IDENTITY_FIELDS)
        for cached in ("hook", "client", "pod_manager"):
            self.__dict__.pop(cached, None)
        self.name = self._set_name(kwargs.get("name") or self.name)
        return super().build_pod_request_obj(context, dry_run=dry_run)

    def defer(self, *, trigger, method_name: str, kwargs: dict[str, Any] | None = None, timeout=None):
        """Wait with ``WavePodTrigger``: a pod that succeeded ends the task without a resume on a worker."""
        if type(trigger) is KubernetesPodTrigger:
            trigger = WavePodTrigger(**trigger.serialize()[1], label_selector=self._run_selector())
        super().defer(trigger=trigger, method_name=method_name, kwargs=kwargs, timeout=timeout)

    def _run_selector(self) -> str:
        """The labels every pod of this run and class carries (the wave's pods share one list per namespace)."""
        from gpupoc.podspec import labels as L

        labels = self.labels or {}
        return ",".join(f"{k}={labels[k]}" for k in (L.RUN_ID, L.TEST_CLASS) if labels.get(k))

    def get_or_create_pod(self, pod_request_obj, context: Any):
        """Create (or find again) the pod and record the submission; an admission refusal is recorded and
        ends the task for good (resubmitting the same request would be refused again)."""
        from kubernetes.client.exceptions import ApiException

        from gpupoc.pipeline.workload_outcome import Rejection

        ns = pod_request_obj.metadata.namespace
        self._await_platform_requeue(context, ns)
        try:
            pod = super().get_or_create_pod(pod_request_obj, context)
        except ApiException as exc:
            if exc.status in (400, 403, 409, 422):
                from gpupoc.steps.attempt_decision import record_refusal, task_message

                message = _status_message(exc.body) or str(exc.reason)
                self._record(context, None, ns, Rejection(exc.status, message))
                decision = record_refusal(self._run_context(context), self.workload_key, ns,
                                          int(getattr(context["ti"], "try_number", 1) or 1),
                                          Rejection(exc.status, message))
                raise AirflowFailException(task_message(decision)) from None  # the platform's own words
            raise
        self._record(context, pod.metadata.name, pod.metadata.namespace or ns)
        return pod

    def find_pod(self, namespace: str, context: Any, *, exclude_checked: bool = True):
        """The provider's ``find_pod`` (a LIST its client sends once), asked again while the API server refuses
        it for now (``gpupoc.common.api_retry``): a throttled answer never fails the task, which Airflow would
        retry as a new attempt of the item."""
        from gpupoc.common.api_retry import call_retrying

        find = super().find_pod
        return call_retrying(lambda: find(namespace, context=context, exclude_checked=exclude_checked),
                             f"LIST /api/v1/namespaces/{namespace}/pods (the task's pod, {self.workload_key})",
                             sleep=self._retry_sleep)

    _retry_sleep = staticmethod(time.sleep)  # a test replaces it

    # A retry first looks for a pod the platform itself requeued (same labels, new name) for this long.
    REQUEUE_GRACE_SECONDS = 5.0

    def _await_platform_requeue(self, context: Any, namespace: str) -> None:
        """On a retry, wait for the platform's own replacement pod before submitting a new one: the plan's
        ``resubmission.wait_seconds`` when the platform is expected to requeue (then none is submitted: the
        task fails naming the expectation), else a short grace so both never run the same item."""
        import time

        if int(getattr(context["ti"], "try_number", 1) or 1) <= 1 or not self.reattach_on_restart:
            return
        policy = self._plan().test_class(self.test_class).resubmission
        deadline = time.monotonic() + (policy.wait_seconds if policy.platform_requeues
                                       else self.REQUEUE_GRACE_SECONDS)
        while time.monotonic() < deadline:
            if self.find_pod(namespace, context=context) is not None:
                return
            time.sleep(1.0)
        if policy.platform_requeues:
            raise AirflowFailException(
                f"{self.workload_key}: the plan expects the platform to requeue preempted or evicted workloads "
                f"(resubmission.platform_requeues), and no requeued pod appeared within {policy.wait_seconds} s")

    def trigger_reentry(self, context: Any, event: dict[str, Any]) -> Any:
        """Read the ended pod as the provider does, except that a pod that is gone is never handed to it: its
        attempt is decided at once from the records the evidence reads (``_end_attempt``), so the task says
        gpupoc's decision ("lost: pod …"), not the provider's "not found after resuming from deferral"."""
        self._restore_identity(context["run_id"])
        if event.get("status") != "success" and self._pod_gone(event):
            self._end_attempt(context, event, None)
        try:
            return super().trigger_reentry(context, event)
        except AirflowFailException:
            raise
        except Exception as exc:
            self._end_attempt(context, event, exc)

    def _pod_gone(self, event: dict[str, Any]) -> bool:
        """The event's pod no longer exists (404); any other answer leaves the pod to the provider."""
        from kubernetes.client.exceptions import ApiException

        try:
            self.hook.get_pod(event.get("name"), event.get("namespace"))
        except ApiException as exc:
            return exc.status == 404
        except Exception:  # noqa: BLE001 - unreadable now: the provider reads it and says why
            return False
        return False

    def _end_attempt(self, context: Any, event: dict[str, Any], exc: Exception | None) -> NoReturn:
        """Decide how the attempt ended and raise accordingly: Airflow retries exactly when another attempt
        follows (the decision's ``next``); otherwise the task fails for good, saying the decision."""
        from gpupoc.pipeline.attempts import NextAttempt
        from gpupoc.steps.attempt_decision import task_message

        outcome, decision = self._decide(context, event)
        if decision is None:
            # the pod still runs or waits (the trigger or this worker lost sight of it): a retry finds it
            # again by its labels and goes on waiting; nothing is submitted twice
            said = f"pod {event.get('name')} is still {outcome.reason}; Airflow's retry reattaches to it"
            self.log.warning("%s (after %s)", said, type(exc).__name__ if exc else "a look")
            if exc is not None:
                raise exc
            raise AttemptEnded(said)
        message = task_message(decision)
        if exc is not None:
            self.log.info("the provider's reading of pod %s ended with %s: %s", event.get("name"),
                          type(exc).__name__, exc)
        if decision.next is NextAttempt.NONE:
            last = " (resubmission.limit reached: no further attempt)" if outcome.outcome.resubmittable else ""
            self.log.error("%s%s", message, last)
            raise AirflowFailException(message + last) from None
        follows = ("Airflow's retry submits the item again" if decision.next is NextAttempt.RESUBMIT
                   else "the retry follows the platform's own requeue")
        self.log.warning("%s; %s", message, follows)
        raise AttemptEnded(f"{message}; {follows}") from None

    def _run_context(self, context: Any) -> RunContext:
        from gpupoc.steps.context import run_context

        return run_context(self.plan_path, context["ti"].dag_id, context["run_id"], self.test_class, task="wave")

    def _decide(self, context: Any, event: dict[str, Any]):
        """How the pod ended and what follows, from the records the evidence reads: the pod now or as the
        observer last saw it, its events, its owners' conditions, the audit log (``steps.attempt_decision``);
        recorded in the run's evidence for the observer."""
        from gpupoc.steps.attempt_decision import decide

        try_number = int(getattr(context["ti"], "try_number", 1) or 1)
        return decide(self._run_context(context), self.workload_key, event.get("namespace"), event.get("name"),
                      try_number)


def _status_message(body: Any) -> str:
    """The ``message`` of a Kubernetes Status body, if the body is one."""
    import json

    try:
        data = json.loads(body) if isinstance(body, (str, bytes)) else body
    except ValueError:
        return ""
    return str((data or {}).get("message") or "") if isinstance(data, dict) else ""
