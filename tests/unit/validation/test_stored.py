"""A stored validation read back and checked against the evidence it validated."""

import json
import shutil

import pyarrow.parquet as pq
import pytest

from gpupoc.evidence.reader import ProblemKind, RunEvidence
from gpupoc.validation import synthetic as syn
from gpupoc.validation import validate_run
from gpupoc.validation.models import Verdict
from gpupoc.validation.stored import distrusted, load_summary, read_summary, run_problems


@pytest.fixture(scope="module")
def validated(tmp_path_factory):
    root = tmp_path_factory.mktemp("evidence")
    validate_run(syn.write_run(root, "tenant_isolation", "r1", syn.good_tables("tenant_isolation")))
    return root


@pytest.fixture
def run(validated, tmp_path):
    root = tmp_path / "evidence"
    shutil.copytree(validated, root)
    return RunEvidence.open(root / "poc_tenant_isolation" / "r1")


def _flip_one_probe(ev):
    path = ev.run_dir / "tables" / "access_probes.parquet"
    t = pq.read_table(path).to_pandas()
    t.loc[0, "allowed"] = True
    t.to_parquet(path)
    return path


def test_an_untouched_run_has_no_problems(run):
    assert run_problems(run, load_summary(run)) == []


def test_a_table_changed_after_validation_is_named_once_as_such(run):
    _flip_one_probe(run)
    problems = run_problems(RunEvidence.open(run.run_dir), load_summary(run))
    assert [(p.kind, p.path) for p in problems] == [
        (ProblemKind.CHANGED_AFTER_VALIDATION, "tables/access_probes.parquet")]


def test_a_table_changed_with_its_manifest_rewritten_to_match_is_still_caught(run):
    path = _flip_one_probe(run)
    m = json.loads((run.run_dir / "manifest.json").read_text())
    from gpupoc.evidence.writer import sha256_file

    m["tables"]["access_probes"]["sha256"] = sha256_file(path)
    (run.run_dir / "manifest.json").write_text(json.dumps(m))
    fresh = RunEvidence.open(run.run_dir)
    assert fresh.problems() == [], "the manifest now agrees with the table"
    assert [p.kind for p in run_problems(fresh, load_summary(fresh))] == [ProblemKind.CHANGED_AFTER_VALIDATION]


def test_a_plan_hash_changed_after_validation_is_a_problem(run):
    m = json.loads((run.run_dir / "manifest.json").read_text())
    m["plan_hash"] = "f" * 64
    (run.run_dir / "manifest.json").write_text(json.dumps(m))
    fresh = RunEvidence.open(run.run_dir)
    assert [p.kind for p in run_problems(fresh, load_summary(fresh))] == [ProblemKind.PLAN_CHANGED]


def test_an_unreadable_summary_is_a_problem_not_a_traceback(run):
    (run.run_dir / "validation" / "summary.json").write_text('{"run_dir": ')
    summary, problem = read_summary(run)
    assert summary is None and problem.kind is ProblemKind.UNREADABLE and problem.path == "validation/summary.json"


def test_distrusted_checks_are_not_verified_naming_their_own_table_first(run):
    _flip_one_probe(run)
    summary = load_summary(run)
    out = distrusted(summary, run_problems(RunEvidence.open(run.run_dir), summary))
    assert {c.verdict for c in out.checks} == {Verdict.NOT_VERIFIED}
    probes = [c for c in out.checks if c.table == "access_probes"]
    quota = [c for c in out.checks if c.table == "quota_samples"]
    assert all("tables/access_probes.parquet changed after validation" in c.reason for c in probes + quota)
    stored = {c.check_id: c.verdict for c in summary.checks}
    for shared in ("ISO-11", "ISO-12", "ISO-13"):  # the synthetic cluster shares no GPUs
        assert stored.pop(shared) is Verdict.NOT_APPLICABLE, shared
    assert set(stored.values()) == {Verdict.PASS}, "the stored summary itself is not changed"


def test_suite_parameters_changed_after_validation_are_a_problem(run):
    assert load_summary(run).parameters == run.suite_parameters, "the summary names the parameters it judged with"
    m = json.loads((run.run_dir / "manifest.json").read_text())
    m["suite_parameters"] = {**m["suite_parameters"], "services_defined": True}
    (run.run_dir / "manifest.json").write_text(json.dumps(m))
    fresh = RunEvidence.open(run.run_dir)
    assert [p.kind for p in run_problems(fresh, load_summary(fresh))] == [ProblemKind.PARAMETERS_CHANGED]


def test_a_summary_written_before_parameters_were_stored_is_not_distrusted_for_them(run):
    path = run.run_dir / "validation" / "summary.json"
    data = json.loads(path.read_text())
    data.pop("parameters")
    path.write_text(json.dumps(data))
    assert run_problems(run, load_summary(run)) == []
