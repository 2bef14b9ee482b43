"""``observe_services`` ends as soon as the traffic ended and every wave item is decided: a lost item does not
keep it waiting, a load nobody will create does not either (its task recorded a failure, or the wave's observer
ended with no load pod of it), and a class the preflight refused ends it at once."""

from __future__ import annotations

import pytest

from gpupoc.pipeline.watch_cache import WatchingCaller
from gpupoc.podspec import labels as L
from gpupoc.preflight.model import PreflightReport, failed
from gpupoc.steps import service_observer as SO
from gpupoc.steps.preflight import PREFLIGHT_FILE
from gpupoc.steps.markers import OBSERVER_END
from gpupoc.steps.services import LOAD_ROLE, deployed, record_load_failure

from ..pipeline.fake_api import pod
from .test_wave_end import wave


class Waited(Exception):
    """observe_services slept: it did not decide on its first look."""


@pytest.fixture
def no_waiting(monkeypatch):
    def sleep(_s):
        raise Waited()

    monkeypatch.setattr(SO.time, "sleep", sleep)


def ended_load(ctx, phase: str = "Succeeded") -> None:
    """The load pod of the class's service with traffic, in ``phase``."""
    [service] = [d for d in deployed(ctx) if d.entry.traffic]
    load = pod("svc-load-1", service.namespace, "svc-load", gates=(), phase=phase)
    load["metadata"]["labels"] = {L.ROLE: LOAD_ROLE, L.SERVICE: service.name}
    ctx.factory.api.pods[(service.namespace, "svc-load-1")] = load


def test_a_lost_wave_item_does_not_keep_the_service_observer_waiting(make_ctx, no_waiting):
    ctx = make_ctx(task="observe_services")
    wave(ctx, skip=(ctx.items[1]["workload_key"],))  # its pod vanished: no record says why
    ended_load(ctx)
    out = SO.observe_services(ctx, interval_s=0)
    assert out["complete"] is True and out["wave"] == "every wave item has its outcome", out


def test_a_running_wave_keeps_it_looking(make_ctx, no_waiting):
    ctx = make_ctx(task="observe_services")
    wave(ctx, phase="Running")
    ended_load(ctx)
    with pytest.raises(Waited):
        SO.observe_services(ctx, interval_s=0)


def test_a_class_the_preflight_refused_ends_it_at_once(make_ctx, no_waiting):
    ctx = make_ctx(task="observe_services")
    ctx.writer.write_json(PREFLIGHT_FILE, PreflightReport(
        "p", [failed("prometheus", "Prometheus", "no answer", "start it")], test_class=ctx.test_class).to_dict())
    out = SO.observe_services(ctx, interval_s=0)
    assert out["complete"] is True and "preflight" in out["skipped"], out
    assert ctx.factory.api.calls == []


def test_a_running_load_keeps_it_looking_even_once_the_wave_observer_ended(make_ctx, no_waiting):
    ctx = make_ctx(task="observe_services")
    wave(ctx)
    ended_load(ctx, phase="Running")
    ctx.writer.write_json(OBSERVER_END, {"open_at_deadline": [], "awaited": []})
    with pytest.raises(Waited):
        SO.observe_services(ctx, interval_s=0)


def test_no_load_pod_keeps_it_looking_while_the_wave_observer_runs(make_ctx, no_waiting):
    ctx = make_ctx(task="observe_services")
    wave(ctx)
    with pytest.raises(Waited):
        SO.observe_services(ctx, interval_s=0)


def test_a_load_pod_not_created_yet_keeps_it_looking_once_the_wave_observer_ended(make_ctx, no_waiting):
    """Its traffic task may still be queued: only the task's own failure record ends the wait for it."""
    ctx = make_ctx(task="observe_services")
    wave(ctx)
    ctx.writer.write_json(OBSERVER_END, {"open_at_deadline": [], "awaited": []})
    with pytest.raises(Waited):
        SO.observe_services(ctx, interval_s=0)


def test_a_traffic_task_that_recorded_its_failure_does_not_keep_it_waiting(make_ctx, no_waiting):
    ctx = make_ctx(task="observe_services")
    wave(ctx)
    [service] = [d for d in deployed(ctx) if d.entry.traffic]
    record_load_failure(ctx, service.entry.workload, PermissionError("pods is forbidden"))
    assert "forbidden" not in str(ctx.read_file(f"service_load_failed-{service.entry.workload}")), "its kind only"
    out = SO.observe_services(ctx, interval_s=0)
    assert out["complete"] is True and out["wave"] == "every wave item has its outcome", out
    record_load_failure(ctx, service.entry.workload, None)  # a new try of the task: the old failure no longer counts
    with pytest.raises(Waited):
        SO.observe_services(ctx, interval_s=0)


class Watching(WatchingCaller):
    """A watching reader over the fake API: reads pass through, its stats are two collections'."""

    STATS = [{"path": "/apis/apps/v1/namespaces/team-serving/deployments", "lists": 2, "relists_after_gone": 1},
             {"path": "/api/v1/namespaces/team-serving/pods", "lists": 1, "relists_after_gone": 0}]

    def call(self, method, path, **kw):
        return self.caller.call(method, path, **kw)

    def stats(self) -> list[dict]:
        return self.STATS


def test_the_cost_of_its_watches_is_on_record(make_ctx, monkeypatch):
    """Each collection's lists and relists after 410 Gone, as the wave's observer keeps its own."""
    ctx = make_ctx(task="observe_services")
    wave(ctx)
    ended_load(ctx)
    monkeypatch.setattr(SO, "watching", lambda caller: Watching(caller))
    SO.observe_services(ctx, interval_s=0)
    assert ctx.read_file(SO.API_FILE) == Watching.STATS
