"""ISO-12 and ISO-13 over the vGPU slices probe's row: each fails on its own defect (a card granted more memory than
it has; a finished pod's slice not given back), stays not verified where the probe could not tell, and is not
applicable (never a pass) where no node slices its cards' memory."""

from __future__ import annotations

import pandas as pd
import pytest

from gpupoc.validation import synthetic as syn
from gpupoc.validation.models import Verdict
from gpupoc.validation.runner import validate_run
from tests.unit.validation import only

SLICED = dict(sharing="hami", memory_slices=True, gpu_uuid="GPU-1", first_tenant="team-vision",
              second_tenant="team-nlp")


def verdicts(tmp_path, row: dict | None) -> dict[str, Verdict]:
    tables = syn.good_tables("tenant_isolation")
    tables["vgpu_slices"] = None if row is None else pd.DataFrame([row])
    summary = validate_run(syn.write_run(tmp_path / "evidence", "tenant_isolation", "r1", tables),
                           suites_dir=only.suites(tmp_path / "suites", "tenant_isolation.vgpu_slices"))
    return {c.check_id: c for c in summary.checks if c.table == "vgpu_slices"}


@pytest.mark.parametrize("row, iso12, iso13", [
    ({**SLICED, "overcommitted": False, "slice_released": True, "slice_release_seconds": 1.0}, "pass", "pass"),
    ({**SLICED, "overcommitted": True, "slice_released": None}, "fail", "not_verified"),
    ({**SLICED, "overcommitted": False, "slice_released": False}, "pass", "fail"),
    ({**SLICED, "overcommitted": None, "slice_released": None, "reason": "the first pod was never placed"},
     "not_verified", "not_verified"),
    (None, "not_verified", "not_verified"),
])
def test_each_check_judges_its_own_part_of_the_row(tmp_path, row, iso12, iso13):
    checks = verdicts(tmp_path, row)
    assert (checks["ISO-12"].verdict.value, checks["ISO-13"].verdict.value) == (iso12, iso13)
    assert {(c.tier.value, c.item) for c in checks.values()} == {("must", "permission_isolation")}


def test_without_vgpu_slices_both_are_not_applicable_with_their_reason(tmp_path):
    checks = verdicts(tmp_path, {"sharing": "time-slicing", "memory_slices": False, "overcommitted": None,
                                 "slice_released": None})
    assert {c.verdict for c in checks.values()} == {Verdict.NOT_APPLICABLE}
    assert {c.reason_code for c in checks.values()} == {"na.no_vgpu_slices"}
    assert "slices of a GPU's memory" in checks["ISO-12"].reason
