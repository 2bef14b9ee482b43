"""The ``admission-refused`` fault: a validating webhook refuses the first gated, bare, 1-GPU pod's creation
with the API server's 403 and the webhook's message, and lets every other pod through."""

from __future__ import annotations

import pytest

from gpupoc.sim.admission import admit_pod
from gpupoc.sim.admission_webhook import WEBHOOK, RefusingWebhook
from gpupoc.sim.api.status import StatusError
from gpupoc.sim.fault_profiles.admission_refused import install
from gpupoc.sim.faults import Fault

from .test_admission import gpu_pod, make_state

GATE = [{"name": "gpupoc.io/wave"}]


def test_the_first_gated_single_gpu_pod_is_refused_with_the_webhooks_message(tmp_path):
    state = make_state(tmp_path, frozenset({Fault.ADMISSION_REFUSED}))
    admit_pod(state, gpu_pod("big", gpus=4, schedulingGates=GATE), "team-vision")  # not one GPU
    admit_pod(state, gpu_pod("ungated", gpus=1), "team-vision")  # not behind a gate
    with pytest.raises(StatusError) as err:
        admit_pod(state, gpu_pod("sweep-1", gpus=1, schedulingGates=GATE), "team-nlp")
    status = err.value.status
    assert status["code"] == 403 and status["reason"] == "Forbidden"
    assert status["message"].startswith(f'admission webhook "{WEBHOOK}" denied the request: ')
    assert "team-nlp/sweep-1" in status["message"]
    admit_pod(state, gpu_pod("sweep-2", gpus=1, schedulingGates=GATE), "team-nlp")  # one pod only


def test_a_dry_run_is_never_refused_and_does_not_use_up_the_refusal(tmp_path):
    state = make_state(tmp_path, frozenset({Fault.ADMISSION_REFUSED}))
    admit_pod(state, gpu_pod("sweep-1", gpus=1, schedulingGates=GATE), "team-nlp", dry_run=True)
    with pytest.raises(StatusError):
        admit_pod(state, gpu_pod("sweep-1", gpus=1, schedulingGates=GATE), "team-nlp")


def test_without_the_fault_nothing_is_refused_and_the_webhook_registers_once(tmp_path):
    state = make_state(tmp_path)
    admit_pod(state, gpu_pod("sweep-1", gpus=1, schedulingGates=GATE), "team-nlp")
    assert state.hooks.validating == []
    faulty = make_state(tmp_path / "f", frozenset({Fault.ADMISSION_REFUSED}))
    install(faulty)
    assert [type(v) for v in faulty.hooks.validating] == [RefusingWebhook]
