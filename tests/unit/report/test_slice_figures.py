"""vGPU slices in the utilization items: each slice's grant against its use, and GPU-hours by team with slices
counted as fractions of their cards; nothing of it where the run has no slices."""

from __future__ import annotations

import pytest

from gpupoc.evidence.reader import RunEvidence
from gpupoc.report import figures
from gpupoc.validation import synthetic as syn


def run(tmp_path, slices: bool) -> dict[str, RunEvidence]:
    tables = syn.good_tables("utilization")
    if slices:
        tables["vgpu_utilization"] = syn.vgpu_utilization()
    return {"utilization": RunEvidence(syn.write_run(tmp_path / "evidence", "utilization", "r1", tables))}


def test_each_slice_shows_its_grant_against_its_use_and_its_fraction_of_the_card(tmp_path):
    f, t = figures.utilization_reports(run(tmp_path, True))
    assert next(x.value for x in f if x.label == "vgpu_slices") == 2
    by = next(x for x in t if x.title == "by_slice")
    rows = {r[by.columns.index("pod")]: dict(zip(by.columns, r)) for r in by.rows}
    assert rows["infer-slice-0"]["share"] == 0.4 and rows["infer-slice-0"]["allocated_gpu_hours"] == pytest.approx(0.8)
    assert rows["infer-slice-1"]["share"] == pytest.approx(0.0651, abs=1e-3)
    assert rows["infer-slice-1"]["cores_allocated"] == 0  # no core limit: its memory share counts
    assert rows["infer-slice-0"]["mem_allocated_mib"] == 12000 and rows["infer-slice-0"]["mem_used_mib_max"] == 9000
    assert by.source == "utilization/vgpu_utilization"


def test_cost_attribution_counts_slices_as_fractions_by_team(tmp_path):
    f, t = figures.cost_attribution(run(tmp_path, True))
    assert next(x.value for x in f if x.label == "slice_gpu_hours") == round(2 * (0.4 + 0.0651), 2)
    team = next(x for x in t if x.title == "by_team_slices")
    assert team.rows == [["team-serving", 2, pytest.approx(2 * 0.4651, abs=1e-3), pytest.approx(1.1)]]


def test_a_run_without_slices_shows_none(tmp_path):
    runs = run(tmp_path, False)
    for step in (figures.utilization_reports, figures.cost_attribution):
        f, t = step(runs)
        assert {x.label for x in f} & {"vgpu_slices", "slice_gpu_hours"} == set()
        assert {x.title for x in t} & {"by_slice", "by_team_slices"} == set()
