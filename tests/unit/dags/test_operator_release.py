"""A wave item's resubmission goes ungated as soon as the release has begun, not only once it has ended: an
attempt the platform took away while the gates were being lifted is not put back behind a gate nobody lifts."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from gpupoc.dags.operator import GpuWorkloadOperator
from gpupoc.steps.markers import RELEASE_FILE, RELEASING_FILE


@pytest.mark.parametrize("markers, released", [((), False), ((RELEASING_FILE,), True), ((RELEASE_FILE,), True),
                                               ((RELEASING_FILE, RELEASE_FILE), True)])
def test_the_release_counts_from_its_first_lifted_gate(tmp_path, markers, released):
    for m in markers:
        (tmp_path / f"{m}.json").write_text("{}")
    op = SimpleNamespace(_writer=lambda _ctx: SimpleNamespace(files_dir=tmp_path))  # the operator's evidence
    assert GpuWorkloadOperator._released(op, {"run_id": "r"}) is released
    assert GpuWorkloadOperator._released(op, None) is False
