"""Cost per candidate in the comparison: the window's cost (idle included, shared parts not counted twice) over
the utilization class's successful workloads; nothing without a verified cost."""

from __future__ import annotations

from gpupoc.compare.figures import cost_per_success
from gpupoc.evidence.reader import RunEvidence
from gpupoc.validation import synthetic as syn

from tests.unit.report.test_cost_figures import cost_rows


def runs(tmp_path, cost=True):
    tables = syn.good_tables("utilization")
    tables["cost_allocation"] = cost_rows() if cost else None
    return {"utilization": RunEvidence.open(syn.write_run(tmp_path / "ev", "utilization", "r1", tables))}


def test_cost_per_successful_workload_divides_the_windows_cost_by_the_successes(tmp_path):
    r = runs(tmp_path)
    wr = r["utilization"].load("workload_runs")
    done = int((wr["outcome"] == "succeeded").sum())
    assert done > 0
    assert cost_per_success(r) == round(16.0 / done, 2)  # 8 GPU-h offered at 2.0; the shared spread not again


def test_no_verified_cost_gives_no_figure(tmp_path):
    assert cost_per_success(runs(tmp_path, cost=False)) is None
    assert cost_per_success({}) is None
