"""The report says what it judged in every format: platform, adapter, Kubernetes version, plan name and hash,
window; a banner when the cluster's own nodes say it is the simulated one; a plan hash differing from the
evidence's as a finding."""

import html
import json
import shutil
import unicodedata
from pathlib import Path

import pytest
from junitparser import JUnitXml

from .conftest import platform_root, write_later_run
from gpupoc.evidence.subject import kwok_nodes, simulated_nodes, subject_rows
from gpupoc.plan import load_plan, plan_hash
from gpupoc.report import build_report
from gpupoc.report.wording import strings
from gpupoc.validation import synthetic as syn

PLAN = Path(__file__).resolve().parents[3] / "plans" / "default.yaml"
EN = strings("en")


@pytest.fixture(scope="module")
def judged(good_root, tmp_path_factory):
    """Built with the default plan, whose hash is not the synthetic evidence's."""
    return build_report(good_root, out_dir=tmp_path_factory.mktemp("subject") / "out", plan=PLAN)


def test_the_subject_comes_from_the_runs_records(judged):
    s = judged.report.subject
    assert (s.platform, s.adapter, s.kubernetes_version, s.plan_name) == ("gpupoc-sim", "kube-scheduler", "v1.32.0",
                                                                       "synthetic")
    assert s.plan_hash == "0" * 64 and s.simulated is True and s.simulated_nodes == 3
    assert s.window_start == "2026-11-30T08:00:00Z" and s.window_end == "2026-11-30T09:00:00Z"
    assert s.report_plan_hash == plan_hash(load_plan(PLAN)) and s.plan_mismatch


@pytest.mark.parametrize("name", ["summary.html", "report.html", "report.md"])
def test_every_page_names_what_was_judged_and_bears_the_simulated_banner(judged, name):
    text = html.unescape((judged.out_dir / name).read_text())
    for fact in ("gpupoc-sim", "kube-scheduler", "v1.32.0", "synthetic", "000000000000", "2026-11-30 08:00:00",
                 "2026-11-30 09:00:00"):
        assert fact in text, f"{name} does not name {fact}"
    assert EN["banner.simulated"].format(nodes=3) in text
    assert "Plan mismatch" in text and plan_hash(load_plan(PLAN))[:12] in text


def test_the_json_and_junit_name_it_too(judged):
    data = json.loads((judged.out_dir / "report.json").read_text())
    assert data["subject"]["platform"] == "gpupoc-sim" and data["subject"]["simulated"] is True
    assert any(f["item"] == "plan" and f["target"] == "second_verification" for f in data["findings"])
    props = {p.name: p.value for suite in JUnitXml.fromfile(str(judged.out_dir / "report.junit.xml"))
             for p in suite.properties()}
    assert props["platform"] == "gpupoc-sim" and props["kubernetes_version"] == "v1.32.0"
    assert props["plan_hash"] == "0" * 64 and props["simulated_cluster"] == "true"
    assert props["plan_mismatch"] == "true" and props["window_end"] == "2026-11-30T09:00:00Z"


def test_the_mismatch_finding_does_not_change_the_decision_by_itself(judged, good_report):
    plain = good_report.report
    assert plain.decision is judged.report.decision and not plain.subject.plan_mismatch
    assert not any(f.item == "plan" for f in plain.findings)


def test_a_real_cluster_has_no_banner_whatever_the_plan_is_called(good_root, tmp_path):
    root = tmp_path / "evidence"
    shutil.copytree(good_root, root, ignore=shutil.ignore_patterns("report", "poc_*"))
    real = {**syn.SIM_PLATFORM, "nodes.simulated": "0", "platform.name": "prod-gpu-a"}
    for tc in ("queue_congestion", "tenant_isolation"):
        write_later_run(root, tc, syn.good_tables(tc), platform=real)
    res = build_report(root, out_dir=tmp_path / "out", plan=PLAN)  # the plan names the simulated cluster
    assert res.report.subject.simulated is False and res.report.subject.platform == "prod-gpu-a"
    page = html.unescape((res.out_dir / "summary.html").read_text())
    assert "banner simulated" not in page and EN["subject.real"] in page


def test_kwok_nodes_are_counted_by_their_annotation_whatever_its_value():
    nodes = [{"metadata": {"annotations": {"kwok.x-k8s.io/node": "fake"}}},
             {"metadata": {"annotations": {"kwok.x-k8s.io/node": "other"}}}, {"metadata": {"annotations": {}}}]
    assert kwok_nodes(nodes) == 2


def test_a_real_control_plane_with_kwok_nodes_bears_the_kwok_banner_and_its_version(tmp_path_factory, tmp_path):
    kwok = {**syn.SIM_PLATFORM, "nodes.simulated": "0", "nodes.kwok": "9", "kubernetes.gitVersion": "v1.37.2"}
    root = platform_root(tmp_path_factory, tmp_path / "evidence", kwok)  # as test_candidate.py's kube-scheduler
    res = build_report(root, out_dir=tmp_path / "out", plan=PLAN)
    s = res.report.subject
    assert (s.simulated, s.kwok_nodes, s.kubernetes_version) == (False, 9, "v1.37.2")
    for name in ("summary.html", "report.md"):
        page = html.unescape((res.out_dir / name).read_text())
        assert EN["banner.kwok"].format(nodes=9, version="v1.37.2") in page, name
        assert EN["subject.kwok_short"].format(nodes=9, version="v1.37.2") in page, name
        assert EN["banner.simulated"].format(nodes=0) not in page


def test_runs_that_did_not_list_their_nodes_say_it_is_not_known(good_root, tmp_path):
    root = tmp_path / "evidence"
    shutil.copytree(good_root, root, ignore=shutil.ignore_patterns("report", "poc_*"))
    write_later_run(root, "utilization", syn.good_tables("utilization"),
                    platform={"kubernetes.gitVersion": "v1.30.2"})
    res = build_report(root, out_dir=tmp_path / "out")
    assert res.report.subject.simulated is None
    assert EN["subject.simulated_unknown"] in html.unescape((res.out_dir / "summary.html").read_text())


def test_runs_of_different_plans_are_a_finding(good_root, tmp_path):
    root = tmp_path / "evidence"
    shutil.copytree(good_root, root, ignore=shutil.ignore_patterns("report"))
    run = write_later_run(root, "utilization", syn.good_tables("utilization"), validate=False)
    manifest = json.loads((run / "manifest.json").read_text())
    manifest["plan_hash"] = "1" * 64
    (run / "manifest.json").write_text(json.dumps(manifest))
    r = build_report(root, out_dir=tmp_path / "out").report
    assert r.subject.plan_hash is None and len(r.subject.evidence_plan_hashes) == 2
    assert any(f.item == "plan" and "111111111111" in f.text for f in r.findings)


def test_the_nodes_annotation_decides_simulated_and_the_plan_names_the_rest():
    nodes = [{"metadata": {"annotations": {"gpupoc.io/simulated": "true"}}}, {"metadata": {"annotations": {}}},
             {"metadata": {}}]
    assert simulated_nodes(nodes) == 1
    plan = load_plan(PLAN)
    rows = {r["key"]: r["value"] for r in subject_rows(plan, nodes)}
    assert rows == {"platform.name": plan.platform.name, "plan.name": plan.name, "window.timezone": "UTC",
                    "nodes.simulated": "1", "nodes.kwok": "0", "nodes.gpu_sharing": "none=3"}
    assert "nodes.simulated" not in {r["key"] for r in subject_rows(plan, None)}, "unlisted nodes: not known"


def test_the_printed_summary_names_it(judged, tmp_path):
    pytest.importorskip("pypdf")
    from pypdf import PdfReader

    from gpupoc.common.chromium import chromium_binary
    from gpupoc.exceptions import ToolMissing
    from gpupoc.report.pdf import print_pdf

    try:
        chromium_binary()
    except ToolMissing as exc:
        pytest.skip(str(exc))
    pdf = print_pdf(judged.out_dir / "summary.html", tmp_path / "summary.pdf")
    pages = ["".join(unicodedata.normalize("NFKC", p.extract_text() or "").split()) for p in PdfReader(pdf).pages]
    assert len(pages) == 1, "the summary still prints on one page"
    for fact in ("gpupoc-sim", "kube-scheduler", "v1.32.0", "000000000000", "Simulatedcluster"):
        assert fact in pages[0]
