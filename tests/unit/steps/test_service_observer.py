"""``observe_services`` ends as soon as the traffic ended and every wave item is decided: a lost item does not
keep it waiting, and a class the preflight refused ends it at once."""

from __future__ import annotations

import pytest

from gpupoc.podspec import labels as L
from gpupoc.preflight.model import PreflightReport, failed
from gpupoc.steps import service_observer as SO
from gpupoc.steps.preflight import PREFLIGHT_FILE
from gpupoc.steps.services import LOAD_ROLE

from ..pipeline.fake_api import pod
from .test_wave_end import wave


class Waited(Exception):
    """observe_services slept: it did not decide on its first look."""


@pytest.fixture
def no_waiting(monkeypatch):
    def sleep(_s):
        raise Waited()

    monkeypatch.setattr(SO.time, "sleep", sleep)


def ended_load(ctx) -> None:
    load = pod("svc-load-1", "team-serving", "svc-load", gates=(), phase="Succeeded")
    load["metadata"]["labels"] = {L.ROLE: LOAD_ROLE}
    ctx.factory.api.pods[("team-serving", "svc-load-1")] = load


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
