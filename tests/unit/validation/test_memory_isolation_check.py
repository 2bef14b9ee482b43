"""ISO-11 over the memory-isolation probe's row: a pass only when the probe found isolation on a shared card, a
failure where it found none, not applicable (never a pass) where no node shares its cards."""

from __future__ import annotations

import pandas as pd
import pytest

from gpupoc.validation import synthetic as syn
from gpupoc.validation.models import Verdict
from gpupoc.validation.runner import validate_run
from tests.unit.validation import only


def iso11(tmp_path, row: dict | None, every_suite: bool = False):
    """ISO-11 and the summary of the good isolation evidence with ``row`` as its memory probe (validated with
    that suite only, unless ``every_suite``)."""
    tables = syn.good_tables("tenant_isolation")
    tables["memory_isolation"] = None if row is None else pd.DataFrame([row])
    summary = validate_run(syn.write_run(tmp_path / "evidence", "tenant_isolation", "r1", tables),
                           suites_dir=None if every_suite else only.suites(tmp_path / "suites",
                                                                            "tenant_isolation.memory_isolation"))
    return next(c for c in summary.checks if c.check_id == "ISO-11"), summary


SHARED = dict(sharing="hami", shared_gpu=True, gpu_uuid="GPU-1", aggressor_tenant="team-nlp")


@pytest.mark.parametrize("row, verdict", [
    ({**SHARED, "isolated": True}, Verdict.PASS),
    ({**SHARED, "isolated": False, "finding": "P1: no GPU memory isolation between tenants"}, Verdict.FAIL),
    ({**SHARED, "isolated": None, "reason": "the pods were placed on different cards"}, Verdict.NOT_VERIFIED),
    (None, Verdict.NOT_VERIFIED),
])
def test_iso11_judges_the_probes_row(tmp_path, row, verdict):
    check, _ = iso11(tmp_path, row)
    assert check.verdict is verdict and check.tier.value == "must" and check.item == "permission_isolation"


def test_without_shared_gpus_iso11_is_not_applicable_with_its_reason_and_the_item_still_passes(tmp_path):
    check, summary = iso11(tmp_path, {"sharing": "none", "shared_gpu": False, "isolated": None}, every_suite=True)
    assert (check.verdict, check.reason_code) == (Verdict.NOT_APPLICABLE, "na.no_shared_gpus")
    assert "no node shares its GPUs" in check.reason
    others = [c for c in summary.checks if c.item == "permission_isolation" and c.table != "vgpu_slices"
              and c.check_id != "ISO-11"]
    assert others and all(c.verdict is Verdict.PASS for c in others)
