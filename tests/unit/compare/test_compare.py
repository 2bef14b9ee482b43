"""gpupoc compare over two candidates' evidence: every format names both platforms and their decisions, the
figures are each candidate's own report's, a different plan is refused with the plans and fields named,
changed files are refused, and a class one candidate did not run is not comparable, never a win."""

import json
import shutil

import jsonschema
import pandas as pd
import pytest

from .conftest import rerecord
from gpupoc.cli import main
from gpupoc.compare import compare
from gpupoc.compare.models import CellStatus
from gpupoc.compare.render import SCHEMA_FILE, json_schema
from gpupoc.exceptions import ComparisonRefused
from gpupoc.plan import DEFAULT_PLAN
from gpupoc.report import build_report
from gpupoc.validation import synthetic as syn


def test_two_copies_of_one_root_give_every_format_with_both_platforms_and_decisions(two_roots, tmp_path):
    a, b = two_roots
    out = tmp_path / "cmp"
    assert main(["compare", "--label", f"kueue={a}", "--label", f"volcano={b}", "--out", str(out),
                 "--plan", str(DEFAULT_PLAN)]) == 0
    data = json.loads((out / "comparison.json").read_text())
    jsonschema.validate(data, json.loads(SCHEMA_FILE.read_text()))
    assert [p["label"] for p in data["platforms"]] == ["kueue", "volcano"]
    decisions = {p["label"]: p["decision"] for p in data["platforms"]}
    assert decisions["kueue"] == decisions["volcano"] != "postpone"
    md, html = (out / "comparison.md").read_text(), (out / "comparison.html").read_text()
    for text in (md, html):
        assert "kueue" in text and "volcano" in text and decisions["kueue"] in text
    assert "<link" not in html and "<script" not in html  # self-contained
    assert "<svg" in html and "wait (seconds)" in html
    pdf = out / "comparison.pdf"
    assert pdf.read_bytes()[:5] == b"%PDF-"
    for p in data["platforms"]:  # each candidate's own report, linked
        assert (out / p["report_dir"] / "report.json").is_file()


def test_the_schema_file_is_the_models(tmp_path):
    assert json.loads(SCHEMA_FILE.read_text()) == json_schema(), "regenerate: python -m gpupoc.compare.render"


def _figures(report):
    return {(it.id, f.label): f.value for it in report.items for f in it.figures}


def test_the_figures_are_each_candidates_own_reports(two_roots, tmp_path):
    a, b = two_roots
    t = syn.good_tables("queue_congestion")  # b waited longer: the figures must differ, each as its report says
    t["workload_runs"]["wait_seconds"] = t["workload_runs"]["wait_seconds"] * 2 + 1
    syn.write_run(b, "queue_congestion", "scheduled__2", t, window_end=syn.T0 + pd.Timedelta(hours=2))
    from gpupoc.validation import validate_run

    validate_run(b / "poc_queue_congestion" / "scheduled__2")
    res = compare([f"a={a}", f"b={b}"], tmp_path / "cmp", plan=DEFAULT_PLAN, pdf=False)
    own = {label: build_report(root, out_dir=tmp_path / f"own-{label}", plan=DEFAULT_PLAN).report
           for label, root in (("a", a), ("b", b))}
    rows = {f.id: {v.label: v.value for v in f.values} for f in res.comparison.figures}
    for label, report in own.items():
        for (item, fig), value in _figures(report).items():
            assert rows[f"{item}:{fig}"][label] == value, (label, item, fig)
        waits = next(tb for it in report.items for tb in it.tables if tb.title == "wait_by_priority")
        cols = waits.columns
        for row in waits.rows:
            pc = row[cols.index("priority_class")]
            assert rows[f"wait_p50:{pc}"][label] == pytest.approx(row[cols.index("wait_p50_seconds")], abs=0.01)
            assert rows[f"wait_max:{pc}"][label] == pytest.approx(row[cols.index("wait_max_seconds")], abs=0.01)
    assert rows["wait_max:gpupoc-low"]["a"] != rows["wait_max:gpupoc-low"]["b"]


def test_evidence_of_a_different_plan_is_refused_naming_the_plans_and_fields(two_roots, tmp_path):
    a, b = two_roots

    def plan(name, max_wait):
        def change(manifest, run_dir):
            manifest.update(plan_name=name, comparable_plan_hash=f"{max_wait:064d}")
            (run_dir / "files").mkdir(exist_ok=True)
            (run_dir / "files" / "plan.json").write_text(json.dumps(
                {"name": name, "test_classes": {"queue_congestion": {"thresholds": {"max_wait_seconds": max_wait}}}}))
        return change

    rerecord(a, plan("gpupoc-sim-default", 180))
    rerecord(b, plan("vendor-trial", 999))
    with pytest.raises(ComparisonRefused) as err:
        compare([f"kueue={a}", f"vendor={b}"], tmp_path / "cmp", pdf=False)
    text = str(err.value)
    assert "'gpupoc-sim-default'" in text and "'vendor-trial'" in text
    assert "test_classes.queue_congestion.thresholds.max_wait_seconds" in text and "name" in text
    assert "--platform" in text
    assert not (tmp_path / "cmp" / "comparison.json").exists()


def test_a_changed_or_damaged_table_is_refused_naming_it(two_roots, tmp_path):
    a, b = two_roots
    table = next((b / "poc_tenant_isolation" / "scheduled__1" / "tables").glob("access_probes*"))
    pd.read_parquet(table).iloc[1:].to_parquet(table)  # a row taken out: still a table, not the one sealed
    with pytest.raises(ComparisonRefused, match=r"b=.*poc_tenant_isolation/scheduled__1/tables/access_probes.* \(changed\)"):
        compare([f"a={a}", f"b={b}"], tmp_path / "cmp", pdf=False)
    table.write_bytes(table.read_bytes()[:-9])
    with pytest.raises(ComparisonRefused, match=r"access_probes.* \(unreadable\)"):
        compare([f"a={a}", f"b={b}"], tmp_path / "cmp", pdf=False)


def test_a_bundle_that_does_not_match_its_seal_is_refused(two_roots, tmp_path):
    import tarfile

    from gpupoc.report.bundle import bundle_path, create, spec_for_report

    a, b = two_roots
    rep = build_report(b, out_dir=b / "report" / "manual__1", plan=DEFAULT_PLAN)
    sealed = create(spec_for_report(rep.out_dir), bundle_path(rep.out_dir))
    ok = compare([f"a={a}", f"b={sealed}"], tmp_path / "cmp", plan=DEFAULT_PLAN, pdf=False)
    assert [p.source_kind for p in ok.comparison.platforms] == ["root", "bundle"]
    tampered = tmp_path / "tampered.tar.gz"
    with tarfile.open(sealed) as src, tarfile.open(tampered, "w:gz") as dst:
        for m in src.getmembers():
            data = src.extractfile(m).read() if m.isfile() else None
            if m.name.endswith("poc_audit_trail/scheduled__1/manifest.json"):
                data = data.replace(b'"verified": true', b'"verified": false', 1) + b" "
                m.size = len(data)
            import io
            dst.addfile(m, io.BytesIO(data) if data is not None else None)
    with pytest.raises(ComparisonRefused, match=r"does not match its seal.*poc_audit_trail/scheduled__1/manifest.json"):
        compare([f"a={a}", f"b={tampered}"], tmp_path / "cmp2", pdf=False)


def test_a_class_run_on_one_candidate_only_is_not_comparable_never_a_win(two_roots, tmp_path):
    a, b = two_roots
    shutil.rmtree(b / "poc_fault_recovery")
    res = compare([f"a={a}", f"b={b}"], tmp_path / "cmp", plan=DEFAULT_PLAN, pdf=False)
    rows = [r for r in res.comparison.matrix if "fault_recovery" in r.test_classes]
    assert rows
    for r in rows:
        assert not r.comparable and {c.status for c in r.cells} == {CellStatus.NOT_COMPARABLE}
    items = {r.id for r in rows if r.kind == "item"}
    assert items <= set(res.comparison.procurement.not_comparable)
    assert not items & set(res.comparison.procurement.key_differences)
    a_cells = [c for r in rows for c in r.cells if c.label == "a"]
    assert any(c.verdict is not None and c.verdict.value == "pass" for c in a_cells)  # its own verdict kept


def test_a_defect_in_one_candidate_shows_only_in_its_column(two_roots, tmp_path):
    from gpupoc.validation import validate_run

    a, b = two_roots
    t = syn.good_tables("tenant_isolation")
    ap = t["access_probes"]
    ap.loc[ap["action"] == "read_logs", ["allowed", "http_status"]] = [True, 200]  # logs readable across tenants
    validate_run(syn.write_run(b, "tenant_isolation", "scheduled__2", t, window_end=syn.T0 + pd.Timedelta(hours=2)))
    res = compare([f"a={a}", f"b={b}"], tmp_path / "cmp", plan=DEFAULT_PLAN, pdf=False)
    by = {p.label: p for p in res.comparison.platforms}
    assert by["b"].decision.value == "postpone" and by["a"].decision.value != "postpone"
    assert res.comparison.procurement.pass_every_must == ["a"]
    failed = [r for r in res.comparison.matrix if r.kind == "item" and r.differs]
    assert failed
    for r in failed:
        cells = {c.label: c.status for c in r.cells}
        assert cells["b"] is CellStatus.FAIL and cells["a"] is CellStatus.PASS


def test_bad_labels_are_refused_with_the_fix(two_roots, tmp_path):
    a, _ = two_roots
    with pytest.raises(ComparisonRefused, match="needs two or more"):
        compare([f"a={a}"], tmp_path / "cmp")
    with pytest.raises(ComparisonRefused, match="expected NAME=ROOT_OR_BUNDLE"):
        compare([str(a), f"b={a}"], tmp_path / "cmp")
    with pytest.raises(ComparisonRefused, match="no such evidence root"):
        compare([f"a={a}", f"b={tmp_path / 'nowhere'}"], tmp_path / "cmp")
    assert main(["compare", "--label", f"a={a}", "--out", str(tmp_path / "cmp")]) == 2


def test_the_serving_figures_are_each_candidate_s_own_report_and_not_measured_without_services(two_roots, tmp_path,
                                                                                              tmp_path_factory):
    from gpupoc.validation import synthetic_services as ss, validate_run
    from tests.unit.report.conftest import good_service_root

    _, b = two_roots
    # a: the report tests' well-serving root (validated once per session), its later utilization run taken out:
    # the later queue congestion and fault recovery runs of a well-serving platform, as b's below but without faults
    a = good_service_root(tmp_path_factory, tmp_path / "a-serving" / "evidence")
    shutil.rmtree(a / "poc_utilization" / "scheduled__2")
    later = syn.T0 + pd.Timedelta(hours=2)
    for tc in ("queue_congestion", "fault_recovery"):
        t = {**syn.good_tables(tc), **ss.service_tables(tc, frozenset({"breach", "slow_replacement"}))}
        validate_run(syn.write_run(b, tc, "scheduled__2", t, window_end=later), parameters=ss.SERVICE_PARAMETERS)
    c = tmp_path / "c" / "evidence"  # a third candidate whose plan ran no service
    shutil.copytree(a, c, ignore=shutil.ignore_patterns("report", "scheduled__2"))
    res = compare([f"a={a}", f"b={b}", f"c={c}"], tmp_path / "cmp", plan=DEFAULT_PLAN, pdf=False)
    rows = {f.id: {v.label: v for v in f.values} for f in res.comparison.figures}
    own = {label: _figures(build_report(root, out_dir=tmp_path / f"own-{label}", plan=DEFAULT_PLAN).report)
           for label, root in (("a", a), ("b", b))}
    for fid, item, label in (("serving_slo", "scheduling_policy", "services_slo_held"),
                             ("serving_availability", "scheduling_policy", "services_availability_min"),
                             ("serving_replacement", "failure_evidence", "max_service_replacement")):
        for cand in ("a", "b"):
            assert rows[fid][cand].value == own[cand][(item, label)], (fid, cand)
        assert rows[fid]["c"].value is None, f"{fid}: not measured without a service, never 0"
    assert (rows["serving_slo"]["a"].value, rows["serving_slo"]["b"].value) == ("1/1", "0/1")
    assert (rows["serving_slo"]["b"].count, rows["serving_slo"]["b"].out_of) == (0, 1)
    assert rows["serving_replacement"]["b"].value == 120.0 > rows["serving_replacement"]["a"].value
    assert "not measured" in (tmp_path / "cmp" / "comparison.md").read_text()
