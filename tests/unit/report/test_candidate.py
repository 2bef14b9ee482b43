"""Every report says what its candidate was, in its banner, its subject table, its JSON and in Chinese: the real
scheduler with the version built (on the real control plane with KWOK nodes), or a simulated mode of it with the
behaviours it imitates and how far it was measured; runs that did not record their nodes: not known."""

import html
import json
import shutil
from pathlib import Path

import jsonschema
import pytest

from .conftest import platform_root, write_later_run
from gpupoc.report import build_report
from gpupoc.report.render import SCHEMA_FILE
from gpupoc.validation import synthetic as syn

PLAN = Path(__file__).resolve().parents[3] / "plans" / "default.yaml"
KWOK = {**syn.SIM_PLATFORM, "nodes.simulated": "0", "nodes.kwok": "9", "kubernetes.gitVersion": "v1.37.2"}


def _root(good_root, tmp_path) -> Path:
    root = tmp_path / "evidence"
    shutil.copytree(good_root, root, ignore=shutil.ignore_patterns("report"))
    return root


def _kwok_root(tmp_path_factory, tmp_path, adapter: str) -> Path:
    """Runs of ``adapter`` on the real control plane with KWOK nodes (``platform_root``)."""
    return platform_root(tmp_path_factory, tmp_path / "evidence", {**KWOK, "adapter": adapter})


def _pages(res) -> dict[str, str]:
    return {n: html.unescape((res.out_dir / n).read_text(encoding="utf-8"))
            for n in ("summary.html", "report.html", "report.md")}


def test_a_simulated_run_is_labelled_a_simulated_mode_with_its_behaviours_and_fidelity(good_root, tmp_path):
    res = build_report(_root(good_root, tmp_path), out_dir=tmp_path / "out", plan=PLAN)
    c = res.report.subject.candidate
    assert c.kind.value == "simulated" and c.project == "kube-scheduler" and c.version == "v1.37"
    assert c.fidelity.value == "measured" and c.behaviours
    for name, page in _pages(res).items():
        assert "Candidate: simulated mode of kube-scheduler v1.37" in page, name
        assert "not kube-scheduler itself" in page and "Fidelity: measured against kube-scheduler v1.37.2" in page
    assert c.behaviours[0] in _pages(res)["report.html"] and c.behaviours[0] in _pages(res)["report.md"]
    data = json.loads((res.out_dir / "report.json").read_text())
    jsonschema.validate(data, json.loads(SCHEMA_FILE.read_text()))
    assert data["subject"]["candidate"]["kind"] == "simulated"
    assert data["subject"]["candidate"]["text"].startswith("simulated mode of kube-scheduler v1.37")


@pytest.mark.parametrize("adapter,label", [
    ("kueue", "real Kueue v0.17.0 on Kubernetes v1.37.2 (KWOK nodes)"),
    ("kube-scheduler", "real kube-scheduler v1.37.2 on Kubernetes v1.37.2 (KWOK nodes)")])
def test_a_kwok_run_labels_kube_scheduler_and_kueue_real_with_the_version_built(tmp_path_factory, tmp_path, adapter,
                                                                               label):
    res = build_report(_kwok_root(tmp_path_factory, tmp_path, adapter), out_dir=tmp_path / "out", plan=PLAN)
    c = res.report.subject.candidate
    assert c.kind.value == "real" and c.kwok and c.text == label
    for name, page in _pages(res).items():
        assert f"Candidate: {label}." in page, name
        assert "simulated mode" not in page, name
    assert json.loads((res.out_dir / "report.json").read_text())["subject"]["candidate"]["text"] == label


def test_a_kwok_run_of_a_scheduler_not_served_there_is_not_known_never_real(tmp_path_factory, tmp_path):
    res = build_report(_kwok_root(tmp_path_factory, tmp_path, "volcano"), out_dir=tmp_path / "out", plan=PLAN)
    c = res.report.subject.candidate
    assert c.kind.value == "not_known" and "not served on the real control plane" in _pages(res)["summary.html"]


def test_runs_that_did_not_record_their_nodes_leave_the_candidate_not_known(good_root, tmp_path):
    root = tmp_path / "evidence"
    shutil.copytree(good_root, root, ignore=shutil.ignore_patterns("report", "poc_*"))
    write_later_run(root, "utilization", syn.good_tables("utilization"),
                    platform={"kubernetes.gitVersion": "v1.30.2", "adapter": "kueue"})
    res = build_report(root, out_dir=tmp_path / "out")
    assert res.report.subject.candidate.kind.value == "not_known"
    assert "Kueue: not known whether real or simulated" in _pages(res)["summary.html"]


def test_the_chinese_report_words_the_label_in_chinese(good_root, tmp_path_factory, tmp_path):
    res = build_report(_kwok_root(tmp_path_factory, tmp_path, "kueue"), out_dir=tmp_path / "kwok",
                       plan=PLAN, language="zh")
    assert "候选：真实的 Kueue v0.17.0，运行于 Kubernetes v1.37.2（KWOK 节点）。" in _pages(res)["summary.html"]
    sim = build_report(_root(good_root, tmp_path / "s"), out_dir=tmp_path / "sim", plan=PLAN, language="zh")
    page = _pages(sim)["report.html"]
    assert "kube-scheduler v1.37 的模拟模式" in page and "保真度：已对照" in page
    assert "GPU 装箱，Pod 逐个绑定（无成组调度）" in page


@pytest.mark.parametrize("language,volcano,hami", [
    ("en", "simulated mode of Volcano v1.15.1 (matched by its wording: v1.13.0 to v1.15.1)",
     "simulated mode of HAMi v2.x (its wording matches v2.9.0 to v2.10.0)"),
    ("zh", "Volcano v1.15.1（按措辞比对所得：与 v1.13.0 至 v1.15.1 的源码一致） 的模拟模式",
     "HAMi v2.x（其措辞与 v2.9.0 至 v2.10.0 的源码一致） 的模拟模式")])
def test_a_version_matched_by_wording_is_worded_so_in_either_language(language, volcano, hami):
    from gpupoc.kube.candidates import label_for
    from gpupoc.report.candidate import short
    from gpupoc.report.wording import Wording

    w = Wording(language)
    assert short(label_for("volcano", True, 0, "v1.31.4"), w).startswith(volcano)
    assert short(label_for("hami", True, 0, "v1.31.4"), w).startswith(hami)
