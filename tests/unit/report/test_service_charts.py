"""A chart per online service: availability (%) and p95 latency (ms) over the seconds of traffic, from the
traffic's start (local time), the SLO's bounds drawn where they are, the seconds that missed it shaded, the node
failure and the replacement marked where there was one, a legend of exactly what is drawn, an A4 page's width,
in English and Chinese."""

import re

import pandas as pd
import pytest

from gpupoc.report import charts, service_charts as SC
from gpupoc.report.wording import Wording
from gpupoc.validation import synthetic_services as ss

EN, ZH = Wording("en"), Wording("zh")
LEGEND = re.compile(r'width="10" height="10" fill="(#[0-9a-f]{6})"/><text[^>]*>([^<]+)</text>')


def _chart(test_class="fault_recovery", faults=frozenset(), words=EN, zone="UTC", **probe_kw):
    t = ss.service_tables(test_class, faults)
    probes = ss.service_probes(**probe_kw) if probe_kw else t["service_probes"]
    title = "图" if words is ZH else "title"
    return SC.traffic_chart(probes, t["service_slo"], t.get("service_recovery", pd.DataFrame()), title, words, zone)


def _legend(svg):
    return {name: colour for colour, name in LEGEND.findall(svg)}


def _drawn(svg):
    """(colour, name) of each thing drawn with a tooltip: lines, reference lines, markers, shaded seconds."""
    return set(re.findall(r'(?:stroke|fill)="(#[0-9a-f]{6})"[^>]*><title>([^<]+)</title>', svg))


def _layout(svg):
    """The chart's scale, read back from what it drew: the availability band's top and bottom, the p95 band's
    bottom (y of its 0 tick) and the x of second 0 and of the axis's end tick."""
    ticks = [(float(y), label) for y, label in re.findall(r'<line x1="56" y1="([\d.]+)"[^>]*stroke="#eee"/>'
                                                         r'<text[^>]*>([\d.]+)</text>', svg)]
    xs = [(float(x), float(v)) for x, v in re.findall(r'<text x="([\d.]+)" y="[\d.]+" text-anchor="middle"[^>]*>'
                                                      r'([\d.]+)</text>', svg)]
    return ticks, xs


def test_both_axes_carry_their_unit_and_time_starts_at_the_traffic_s_start_in_local_time():
    svg = _chart(zone="Asia/Shanghai")
    assert ">availability (%)<" in svg and ">p95 latency (ms)<" in svg
    assert "seconds after the traffic&#x27;s start (2026-11-30 16:00:20)<" in svg
    ticks, xs = _layout(svg)
    assert [v for _, v in xs] == [0, 10, 20, 30, 40], "a quarter of the axis's end is a round tick"
    assert int(re.search(r'width="(\d+)"', svg).group(1)) <= 700, "fits an A4 page's text width"


def test_the_slo_bounds_are_drawn_at_their_values_and_the_legend_lists_exactly_what_is_drawn():
    svg = _chart()
    legend, drawn = _legend(svg), _drawn(svg)
    assert set(legend.items()) == {(name, colour) for colour, name in drawn if "missed the SLO" not in name} \
        | {("seconds that missed the SLO", "#f6c6c2")}
    assert {"availability", "p95 latency", "SLO: availability ≥ 99 %", "SLO: p95 ≤ 500 ms"} <= set(legend)
    ticks, _ = _layout(svg)
    y_of = {}
    for y, label in ticks:  # the first band's ticks come first (0..100), then the latency band's
        y_of.setdefault(("avail" if len(y_of) < 5 else "p95", label), y)
    slo_ys = [float(y) for y in re.findall(r'<line x1="56" y1="([\d.]+)" x2="\d+" y2="[\d.]+" stroke="#555555"', svg)]
    top, bottom = y_of[("avail", "100")], y_of[("avail", "0")]
    assert slo_ys[0] == pytest.approx(bottom - (bottom - top) * 0.99, abs=0.2), "availability bound at 99 %"
    p95_zero = y_of[("p95", "0")]
    p95_top = min(y for (band, _), y in y_of.items() if band == "p95")
    top_value = max(float(label) for (band, label) in y_of if band == "p95")
    assert slo_ys[1] == pytest.approx(p95_zero - (p95_zero - p95_top) * 500 / top_value, abs=0.2), \
        "p95 bound at 500 ms"


def test_the_node_failure_and_the_replacement_are_marked_where_they_happened():
    svg = _chart()
    _, xs = _layout(svg)
    x0, x_end = xs[0][0], xs[-1][0]
    per_second = (x_end - x0) / xs[-1][1]
    marks = dict((name, float(x)) for x, name in
                 re.findall(r'<line x1="([\d.]+)" y1="[\d.]+" x2="[\d.]+" y2="[\d.]+" stroke="#[0-9a-f]{6}" '
                            r'stroke-width="2"><title>([^<]+)</title>', svg))
    assert marks["node inference-node-0 failed"] == pytest.approx(x0 + ss.NODE_FAILURE_SECOND * per_second, abs=0.2)
    assert marks["replacement replica ready"] == pytest.approx(x0 + (ss.NODE_FAILURE_SECOND + 12) * per_second,
                                                               abs=0.2)
    shaded = re.findall(r'<rect x="([\d.]+)" y="[\d.]+" width="([\d.]+)"[^>]*><title>(seconds? [^<]*): missed the SLO'
                        r'</title>', svg)
    assert [t for _, _, t in shaded] == [f"seconds {ss.NODE_FAILURE_SECOND} to {ss.NODE_FAILURE_SECOND + 2}"], \
        "the three seconds that missed the SLO, shaded as one span"
    x, w, _ = shaded[0]
    assert float(x) == pytest.approx(marks["node inference-node-0 failed"], abs=0.2)
    assert float(w) == pytest.approx(3 * per_second, abs=0.2)


def test_without_a_failure_or_a_breach_the_legend_does_not_list_them():
    svg = _chart("queue_congestion")
    legend = _legend(svg)
    assert not [n for n in legend if "failed" in n or "replacement" in n or "missed" in n]
    assert "missed the SLO</title>" not in svg


def test_a_second_without_an_answer_is_a_gap_in_the_latency_line_not_a_zero():
    svg = _chart(down=(10, 11))
    lines = re.findall(r'<polyline fill="none" stroke="#ff7f0e"[^>]*points="([^"]+)"', svg)
    assert len(lines) == 2, "the p95 line breaks where no request was answered"
    availability = re.findall(r'<polyline fill="none" stroke="#1f77b4"[^>]*points="([^"]+)"', svg)
    assert len(availability) == 1, "availability is known every second (0 % when nothing answered)"


def test_the_chinese_chart_says_everything_in_chinese():
    svg = _chart(words=ZH, zone="Asia/Shanghai")
    text = re.sub(r"<[^>]+>", " ", svg)
    words = set(re.findall(r"[A-Za-z][A-Za-z0-9_.\-]*", text)) - {"p95", "SLO", "inference-node-0"}
    assert not words, words
    assert "可用率（%）" in svg and "p95 延迟（毫秒）" in svg and "流量开始（2026-11-30 16:00:20）之后的秒数" in svg
    assert "SLO：p95 ≤ 500 毫秒" in svg and "节点 inference-node-0 故障" in svg


def test_a_service_without_traffic_rows_says_so():
    svg = SC.traffic_chart(pd.DataFrame(), pd.DataFrame(), pd.DataFrame(), "title", EN)
    assert ">no data<" in svg
    assert ">no data<" in charts.panels("t", [charts.Panel("y", 1.0)], 10, "x")


def test_each_class_s_service_gets_its_own_chart_and_caption(tmp_path):
    from gpupoc.validation import synthetic as syn

    for tc in SC.CLASSES:
        syn.write_run(tmp_path, tc, "r1", ss.service_tables(tc))
    from gpupoc.evidence.reader import find_runs

    runs = {ev.test_class: ev for ev in find_runs(tmp_path)}
    svgs, captions = SC.service_charts(runs, EN)
    assert set(svgs) == set(captions) == {f"service_{tc}_{ss.SERVICE}" for tc in SC.CLASSES}
    assert captions[f"service_fault_recovery_{ss.SERVICE}"].startswith(f"Online service {ss.SERVICE} (Fault recovery)")
    assert "node inference-node-0 failed" in svgs[f"service_fault_recovery_{ss.SERVICE}"]
    assert "failed" not in _legend(svgs[f"service_queue_congestion_{ss.SERVICE}"])
