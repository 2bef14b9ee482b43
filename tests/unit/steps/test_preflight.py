"""A class whose preflight failed: nothing submitted, every table not verified naming the missing piece, a
verdict that fails naming it; a passed preflight changes nothing."""

from __future__ import annotations

import pytest
import yaml

from gpupoc.evidence.reader import RunEvidence
from gpupoc.exceptions import PrerequisiteMissing
from gpupoc.plan.loader import DEFAULT_PLAN
from gpupoc.preflight.model import PreflightReport, failed, ok
from gpupoc.steps import finish
from gpupoc.steps.context import RunContext
from gpupoc.steps.preflight import PREFLIGHT_FILE, collect_not_run, missing_prerequisites
from gpupoc.classes.registry import definition
from gpupoc.validation.reasons import word

TC = "utilization"


@pytest.fixture
def ctx(tmp_path):
    data = yaml.safe_load(DEFAULT_PLAN.read_text())
    data["platform"]["kubeconfig"] = str(tmp_path / "kubeconfig")
    data["platform"]["simulated"] = True  # the default plan's sim injector needs the simulated cluster
    (tmp_path / "kubeconfig").write_text("apiVersion: v1\nkind: Config\n")
    data["evidence_root"] = str(tmp_path / "evidence")
    data["evidence_sources"] = {}
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(data))
    return RunContext(str(plan), f"poc_{TC}", "manual__1", TC, task="collect_evidence")


def _record(ctx, *results):
    ctx.writer.write_json(PREFLIGHT_FILE, PreflightReport("p", list(results), test_class=TC).to_dict())


def test_a_passed_preflight_leaves_nothing_missing(ctx):
    _record(ctx, ok("api", "", "answers"))
    assert missing_prerequisites(ctx) == []


def test_every_table_of_a_class_not_run_names_the_missing_piece_in_english_and_chinese(ctx):
    _record(ctx, ok("api", "", "answers"), failed("prometheus.series", "training", "no DCGM_FI_DEV_GPU_UTIL series",
                                                  "install dcgm-exporter"))
    missing = missing_prerequisites(ctx)
    assert missing == ["prometheus.series: training: no DCGM_FI_DEV_GPU_UTIL series — fix: install dcgm-exporter"]
    collect_not_run(ctx, None, missing)
    ev = RunEvidence.open(ctx.run_dir)
    for table in definition(TC).tables:
        st = ev.status(table)
        assert not st.verified and st.code == "table.prerequisite", (table, st)
        assert word(st.code, st.args) == f"not run: a prerequisite is missing (preflight): {missing[0]}"
        assert "未运行" in word(st.code, st.args, "zh")
    assert not (ctx.run_dir / "files" / "pods.json").exists(), "nothing was asked of the cluster"


def test_the_verdict_of_a_class_not_run_fails_naming_what_is_missing():
    with pytest.raises(PrerequisiteMissing, match="no DCGM series"):
        finish.verdict({"success": False, "failed_checks": [], "prerequisites_missing": ["no DCGM series"],
                        "test_class": TC})
