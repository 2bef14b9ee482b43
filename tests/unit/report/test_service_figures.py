"""The online services in the report: each service's SLO line and the serving replicas preempted (scheduling
policy), a node failure under a serving replica against the bounds it was judged by (failure evidence), serving
GPUs allocated against used (utilization, cost), the summary's service figures; every counted figure counts
its check's rows, on a platform that serves well and on one that does not, and missing evidence is no pass."""

import json
import shutil
import unicodedata

import pandas as pd
import pytest

from .agreement import disagreements
from .conftest import good_service_root, write_service_runs
from gpupoc.report import build_report
from gpupoc.report import measures as M
from gpupoc.report.cells import cell, header
from gpupoc.report.models import Verdict
from gpupoc.report.service_figures import harness_late
from gpupoc.report.wording import Wording
from gpupoc.validation import synthetic_services as ss

FAULTS = frozenset({"breach", "unready", "preempted_low", "stale", "slow_replacement"})


def _root(good_root, tmp, name, **kw):
    root = tmp / name / "evidence"
    shutil.copytree(good_root, root, ignore=shutil.ignore_patterns("report"))
    return write_service_runs(root, **kw)


@pytest.fixture(scope="module")
def built(good_root, tmp_path_factory):
    """Reports of a platform that serves well, of one that breaks every service check, and of one whose load
    pod wrote nothing (``held`` unknown) judged with a plan that tightens the replacement bound to 60 s."""
    tmp = tmp_path_factory.mktemp("services")
    unmeasured = ss.service_tables("queue_congestion")["service_slo"].assign(held=None, availability_pct=None,
                                                                              seconds=0, sent=0)
    roots = {"good": good_service_root(tmp_path_factory, tmp / "good" / "evidence"), "bad": _root(good_root, tmp, "bad", faults=FAULTS),
             "unmeasured": _root(good_root, tmp, "unmeasured", parameters={"max_replica_replacement_seconds": 60},
                                 tables={"queue_congestion": {"service_slo": unmeasured}})}
    return {name: build_report(root, out_dir=tmp / name / "report") for name, root in roots.items()}


def _figures(report, item):
    return {f.label: f for f in report.item(item).figures}


def _table(report, item, title):
    tb = next(tb for tb in report.item(item).tables if tb.title == title)
    return [dict(zip(tb.columns, row)) for row in tb.rows]


def test_each_service_s_slo_line_is_shown_against_its_bounds_with_the_counted_figures(built):
    good, bad = built["good"].report, built["bad"].report
    f = _figures(good, "scheduling_policy")
    assert (f["services_slo_held"].value, f["services_slo_held"].check) == ("1/1", "SVC-01")
    assert (f["services_measured"].value, f["services_measured"].check) == ("1/1", "SVC-02")
    assert f["services_availability_min"].value == 100.0 and f["serving_preempted"].value == 0
    [row] = _table(good, "scheduling_policy", "service_slo")
    assert row == {"service": ss.SERVICE, "tenant": ss.TENANT, "availability_pct": 100.0,
                   "slo_availability_pct": 99.0, "worst_p95_ms": 28.0, "slo_p95_ms": 500.0, "worst_p99_ms": 29.0,
                   "slo_p99_ms": 1000.0, "breach_seconds": 0, "unready_answers": 0, "held": True,
                   "late_sent": None, "late_read": None, "harness_lag_pct": None, "max_harness_lag_pct": None,
                   "reason": "availability 100%, worst p95 28.0 ms, worst p99 29.0 ms"}
    assert good.item("scheduling_policy").verdict is Verdict.PASS
    f = _figures(bad, "scheduling_policy")
    assert f["services_slo_held"].value == "0/1" and f["services_availability_min"].value == 82.5
    [row] = _table(bad, "scheduling_policy", "service_slo")
    assert (row["worst_p95_ms"], row["breach_seconds"], row["unready_answers"], row["held"]) == (800.0, 9, 5, False)
    assert bad.item("scheduling_policy").verdict is Verdict.FAIL


def test_a_preempted_serving_replica_names_its_preemptor_and_both_priorities(built):
    good, bad = built["good"].report, built["bad"].report
    assert "serving_preemptions" not in [tb.title for tb in good.item("scheduling_policy").tables]
    f = _figures(bad, "scheduling_policy")["serving_preempted_by_higher"]
    assert (f.value, f.check) == ("0/1", "SVC-04")
    [row] = _table(bad, "scheduling_policy", "serving_preemptions")
    assert (row["preemptor"], row["preemptor_priority"], row["priority"], row["preempted_by_higher"]) == \
        (f"team-vision/qc-low-{ss.LOW_PRIORITY}", ss.LOW_PRIORITY, ss.SERVING_PRIORITY, False)


def test_the_node_failure_under_a_replica_is_shown_against_the_bounds_its_checks_used(built):
    good, bad, tight = (built[k].report for k in ("good", "bad", "unmeasured"))
    f = _figures(good, "failure_evidence")
    assert (f["service_endpoint_removed"].value, f["service_endpoint_removed"].check) == ("1/1", "SVC-05")
    assert (f["service_replacement_ready"].value, f["service_replacement_ready"].check) == ("1/1", "SVC-07")
    assert (f["max_endpoint_removal"].value, f["max_service_replacement"].value, f["max_service_breach"].value) == \
        (0.4, 12.0, 3.0)
    assert f["chains_complete"].value == "5/5", "the other failure records stay beside it"
    [row] = _table(good, "failure_evidence", "service_recovery")
    assert (row["max_endpoint_removal_seconds"], row["max_replica_replacement_seconds"],
            row["max_slo_breach_seconds"]) == (10.0, 90.0, 20.0)
    [row] = _table(bad, "failure_evidence", "service_recovery")
    assert (row["endpoint_removed"], row["replacement_seconds"], row["breach_seconds"]) == (False, 120.0, 30)
    assert _figures(bad, "failure_evidence")["service_endpoint_removed"].value == "0/1"
    assert bad.item("failure_evidence").verdict is Verdict.FAIL
    [row] = _table(tight, "failure_evidence", "service_recovery")
    assert row["max_replica_replacement_seconds"] == 60.0, "the plan's bound, not the suite's default"


def test_serving_gpus_are_shown_allocated_against_used(built):
    r = built["good"].report
    rows = {row["serving"]: row for row in _table(r, "utilization_reports", "serving_gpus")}
    assert rows[True]["gpus"] == 1 and rows[False]["gpus"] == 3
    cost = _figures(r, "cost_attribution")
    assert cost["serving_allocated_gpu_hours"].value == rows[True]["allocated_gpu_hours"] == 4.0
    assert cost["serving_used_gpu_hours"].value == pytest.approx(rows[True]["used_gpu_hours"], abs=0.01)
    assert cost["serving_used_gpu_hours"].value < cost["serving_allocated_gpu_hours"].value


@pytest.mark.parametrize("name", ["good", "bad", "unmeasured"])
def test_every_service_figure_counts_its_check_s_rows_and_the_summary_repeats_it(built, name):
    report = json.loads((built[name].out_dir / "report.json").read_text())
    assert disagreements(report) == []
    body = {f["check"]: f for it in report["items"] for f in it["figures"] if f.get("check")}
    for k in report["key_figures"]:
        if k["label"] in ("key.services_slo_held", "key.serving_replaced") and k["check"]:
            assert (k["count"], k["out_of"]) == (body[k["check"]]["count"], body[k["check"]]["out_of"])


def test_the_summary_gives_each_class_s_service_figure_after_its_own(built):
    good, bad = built["good"].report, built["bad"].report
    keys = [(k.test_class, k.label) for k in good.key_figures]
    assert keys.index(("queue_congestion", "key.services_slo_held")) == \
        keys.index(("queue_congestion", "key.waits_explained")) + 1
    assert keys.index(("fault_recovery", "key.serving_replaced")) == \
        keys.index(("fault_recovery", "key.chains_complete")) + 1
    by = {k.label: k for k in good.key_figures}
    assert by["key.services_slo_held"].value == "1/1 (lowest availability 100 %)"
    assert by["key.serving_replaced"].value == "1/1 (longest 12 s)"
    by = {k.label: k for k in bad.key_figures}
    assert by["key.services_slo_held"].status is Verdict.FAIL and by["key.services_slo_held"].value.startswith("0/1")
    assert by["key.serving_replaced"].status is Verdict.FAIL, "replaced, but too late: its checks failed"
    page = (built["good"].out_dir / "summary.html").read_text()
    assert "online services that met their SLO" in page and "serving replicas replaced after a node failure" in page


def test_a_plan_without_services_shows_no_service_figure(good_report):
    r = good_report.report
    labels = {f.label for it in r.items for f in it.figures}
    assert not labels & {"services_slo_held", "services_measured", "service_endpoint_removed", "serving_gpus"}
    assert not [k for k in r.key_figures if k.label.startswith(("key.services", "key.serving"))]
    assert not [name for name in r.charts if name.startswith("service_")]


def test_unmeasured_traffic_is_never_shown_as_a_held_slo(built):
    r = built["unmeasured"].report
    f = _figures(r, "scheduling_policy")
    assert f["services_measured"].value == "0/1" and "services_slo_held" not in f
    key = next(k for k in r.key_figures if k.label == "key.services_slo_held")
    assert key.value is None and key.status is not Verdict.PASS
    assert r.item("scheduling_policy").verdict is not Verdict.PASS


def test_the_harness_s_lag_is_counted_beside_the_slo_and_never_as_a_held_or_failed_one():
    slo = pd.DataFrame([
        {"service": "a", "seconds": 90, "held": True, "harness_lag": False, "late_sent": 4, "late_read": 1},
        {"service": "b", "seconds": 90, "held": None, "harness_lag": True, "late_sent": 300, "late_read": 20},
        {"service": "c", "seconds": 0, "held": None, "harness_lag": None, "late_sent": None, "late_read": None}])
    lagged, held, measured = M.slo_harness_lag(slo), M.slo_held(slo), M.traffic_measured(slo)
    assert (lagged.count, lagged.total, lagged.check) == (1, 2, "SVC-01")
    assert (held.count, held.total) == (1, 1), "an SLO the harness's lag left open is neither held nor missed"
    assert (measured.count, measured.total) == (2, 3), "the lagged service's traffic was measured"
    assert harness_late(slo) == 325


def test_the_harness_s_lag_is_worded_in_chinese():
    zh = Wording("zh")
    note = cell("availability 100%, worst p95 20.0 ms, worst p99 21.0 ms; harness lag: 5 of 450 requests sent late, "
                "2 answers read late, judged on the replica's own time", "reason", zh)
    assert not any(quoted for _, quoted in note.parts) and "450 个请求中有 5 个延迟发出" in note.text
    open_ = cell("not verified: the load generator sent 63.3% of requests late and read 10% of answers late (65% of "
                 "the window, more than 50%): harness lag, not the platform", "reason", zh)
    assert not any(quoted for _, quoted in open_.parts) and "不是平台的问题" in open_.text


def test_the_service_s_reasons_are_worded_in_chinese():
    zh = Wording("zh")
    missed = cell("availability 82.5% < 99%; p95 800 ms > 500 ms", "reason", zh)
    assert not any(quoted for _, quoted in missed.parts)
    assert missed.text == "可用率 82.5%，低于 SLO 的 99%；p95 延迟 800 毫秒，高于 SLO 的 500 毫秒"
    met = cell("availability 100%, worst p95 28.0 ms, worst p99 None ms", "reason", zh)
    assert met.text.startswith("可用率 100%，最差 p95 28.0 毫秒") and "None" not in met.text
    stale = cell("the failed node's replica stayed a ready endpoint while the observer looked; no replacement "
                 "replica became ready while the observer looked", "reason", zh)
    assert stale.text == "观测期间故障节点上的副本一直是就绪端点；观测期间没有替代副本就绪"
    assert cell("preempted", "end", zh).text == "被抢占" and cell("running", "end", zh).text == "运行中"
    assert cell("Taint manager: deleting due to NoExecute taint", "end_message", zh).quote
    assert cell(31.361, "p95_ms", zh).text == "31.4"
    for action, words in (("scale_service", "扩缩在线服务"), ("patch_service", "修改在线服务"),
                          ("proxy_service", "代理访问在线服务")):  # ISO-14's attempts in the security table
        assert cell(action, "action", zh).text == words
        assert header(action, zh, "action") == words


@pytest.fixture(scope="module")
def chromium():
    from gpupoc.common.chromium import chromium_binary
    from gpupoc.exceptions import ToolMissing

    try:
        return chromium_binary()
    except ToolMissing as exc:
        pytest.skip(str(exc))


def _pages(pdf):
    from pypdf import PdfReader

    return ["".join(unicodedata.normalize("NFKC", p.extract_text() or "").split()) for p in PdfReader(str(pdf)).pages]


def _squash(text):
    return "".join(unicodedata.normalize("NFKC", text).split())


@pytest.mark.parametrize("language", ["en", "zh"])
def test_printed_the_summary_stays_one_page_and_each_service_chart_prints_whole(chromium, built, tmp_path, language):
    from gpupoc.report.pdf import print_pdf, print_report_pdf

    res = build_report(built["bad"].out_dir.parent / "evidence", out_dir=tmp_path, language=language)
    words = Wording(language)
    assert len(_pages(print_pdf(res.paths["summary"], tmp_path / "summary.pdf"))) == 1
    pages = _pages(print_report_pdf(tmp_path))
    for name, caption in res.report.chart_captions.items():
        [page] = [p for p in pages if _squash(caption) in p]  # its caption, once
        for axis in ("axis.availability", "axis.p95_ms", "axis.traffic_start"):
            assert _squash(words.t(axis)) in page, f"{name}: {axis} not on the caption's page"
