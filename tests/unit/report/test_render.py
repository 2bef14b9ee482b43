"""HTML, Markdown and JSON outputs: schema-valid JSON, self-contained HTML, language switch."""

import json
import re

import jsonschema
import pytest

from .conftest import GOOD_SCORES
from gpupoc.report import build_report
from gpupoc.report.render import SCHEMA_FILE, json_schema, strings


@pytest.fixture(scope="module")
def built(scored_report):
    return scored_report


def test_json_output_is_valid_against_the_documented_schema(built):
    schema = json.loads(SCHEMA_FILE.read_text())
    data = json.loads(built.paths["json"].read_text())
    jsonschema.validate(data, schema)
    assert data["decision"] == "go-live" and len(data["items"]) == 11
    assert "total" not in json.dumps(data["items"][0]).lower(), "the report never has a total score"


def test_schema_file_matches_the_model():
    assert json.loads(SCHEMA_FILE.read_text()) == json_schema(), (
        "report.schema.json is stale; regenerate with python -m gpupoc.report.render")


def test_html_is_self_contained(built):
    html = built.paths["html"].read_text()
    assert "<style>" in html and html.count("<svg") >= 5
    assert not re.search(r"<script|<link|@import|url\(", html, re.I)
    refs = re.findall(r'(?:src|href)\s*=\s*"([^"]*)"', html)
    external = [r for r in refs if re.match(r"^(https?:)?//", r)]
    assert not external, f"external references in the HTML: {external}"


def test_html_shows_every_view_item_and_chart(built):
    import html as markup

    html = markup.unescape(built.paths["html"].read_text())
    en = strings("en")
    for key in ("view.security", "view.platform", "view.business", "chart.queue_timeline",
                "chart.wait_by_priority", "chart.utilization_heatmap", "chart.allocated_vs_used",
                "chart.failure_timeline", "section.failure_records", "section.stability"):
        assert en[key] in html, f"missing {key}"
    assert 'id="item-permission_isolation"' in html and "Wang Fang" in html
    docs = re.search(r'href="([^"]*data_docs/local_site/index.html)"', html)
    assert docs and (built.out_dir / docs.group(1)).resolve().is_file(), "the Data Docs link must resolve"
    links = re.findall(r'href="([^"#][^"]*\.(?:parquet|csv|html))"', html)
    assert {h.rsplit(".", 1)[-1] for h in links} >= {"parquet", "csv", "html"}, "each table as parquet, CSV, HTML"
    assert all((built.out_dir / h).resolve().is_file() for h in links)


def test_markdown_has_decision_scope_and_failure_records(built):
    md = built.paths["markdown"].read_text()
    assert "## Decision: **Go live**" in md
    assert "| Training | can go live |" in md
    assert "| Scenario | nonzero-exit |\n|---|---|\n| Trigger | workload exits with code 3 |" in md


def test_language_switch_uses_the_chinese_string_table(good_root, tmp_path):
    res = build_report(good_root, out_dir=tmp_path / "zh", scorecard=GOOD_SCORES, language="zh")
    html = res.paths["html"].read_text()
    md = res.paths["markdown"].read_text()
    zh = strings("zh")
    assert res.report.language == "zh" and '<html lang="zh">' in html
    assert zh["title"] in html and zh["decision.go-live"] in md and zh["view.security"] in md
    assert strings("en")["title"] not in html and "Permission isolation" not in html
    assert "计划禁止的每次尝试都被拒绝" in html, "check signals are shown in Chinese too"


def test_string_tables_have_the_same_keys():
    assert set(strings("en")) == set(strings("zh"))


def test_every_check_signal_has_a_chinese_translation():
    from gpupoc.report.render import check_signals
    from gpupoc.validation.suites import load_suites

    ids = {e["meta"]["check_id"] for s in load_suites() for e in s.data["expectations"]}
    assert ids == set(check_signals("zh")), f"translate: {ids - set(check_signals('zh'))}"


def test_charts_are_well_formed_svg_and_markdown_links_them(built):
    import xml.etree.ElementTree as ET

    for name, svg in built.report.charts.items():
        root = ET.fromstring(svg)
        assert root.tag.endswith("svg"), name
        assert (built.out_dir / "charts" / f"{name}.svg").is_file()
        assert f"](charts/{name}.svg)" in built.paths["markdown"].read_text()
