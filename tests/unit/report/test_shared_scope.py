"""The report's "Shared GPUs" scope line, built from stored evidence: none where no node shares its GPUs (the
default cluster's report is as it was), blocked when a sharing check fails, can go live when all that applied
passed; worded in English and Chinese."""

from __future__ import annotations

import pandas as pd
import pytest

from gpupoc.report import build_report
from gpupoc.validation import synthetic as syn

from .conftest import GOOD_SCORES, write_later_run

HAMI = dict(sharing="hami", shared_gpu=True, isolated=True, gpu_uuid="GPU-7a55", node="inference-node-1")
SLICES = dict(sharing="hami", memory_slices=True, gpu_uuid="GPU-7a55", overcommitted=False, slice_released=True,
              slice_release_seconds=1.0)


def shared(root_copy, **slices):
    tables = syn.good_tables("tenant_isolation")
    tables["memory_isolation"] = pd.DataFrame([HAMI])
    tables["vgpu_slices"] = pd.DataFrame([{**SLICES, **slices}])
    write_later_run(root_copy, "tenant_isolation", tables)
    return root_copy


def line(report):
    return next((s for s in report.scope if s.scenario == "shared_gpus"), None)


def test_the_default_clusters_report_has_no_shared_gpus_line(root_copy, tmp_path):
    r = build_report(root_copy, out_dir=tmp_path, scorecard=GOOD_SCORES).report
    assert line(r) is None and [s.scenario for s in r.scope] == ["training", "inference", "failure_handling",
                                                                 "cross_team"]


@pytest.mark.parametrize("language, status, shown", [("en", "can go live", "Shared GPUs"),
                                                     ("zh", None, "共享 GPU")])
def test_a_hami_cluster_whose_sharing_checks_pass_can_go_live_on_shared_gpus(root_copy, tmp_path, language,
                                                                             status, shown):
    out = build_report(shared(root_copy), out_dir=tmp_path, scorecard=GOOD_SCORES, language=language)
    sc = line(out.report)
    assert sc.status.value == "go_live" and sc.items == ["ISO-11", "ISO-12", "ISO-13"]
    summary = (tmp_path / "summary.html").read_text(encoding="utf-8")
    assert shown in summary and (status is None or status in summary)


def test_a_leaked_slice_blocks_the_shared_gpus_line_naming_its_check(root_copy, tmp_path):
    r = build_report(shared(root_copy, slice_released=False, slice_release_seconds=None), out_dir=tmp_path,
                     scorecard=GOOD_SCORES).report
    sc = line(r)
    assert sc.status.value == "blocked" and sc.reason == "failed: ISO-13"
    assert r.decision.value == "postpone" and r.item("permission_isolation").verdict.value == "fail"
