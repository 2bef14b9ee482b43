"""Render the report as self-contained HTML, Markdown and JSON, in the plan's language."""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from gpupoc.report import candidate, cells
from gpupoc.report.cost_charts import ITEM_CHARTS
from gpupoc.report.models import EvidenceTable, Report
from gpupoc.report.wording import LANGUAGES, TEMPLATES, Wording, check_signals, strings  # noqa: F401 (re-exported)

SCHEMA_FILE = Path(__file__).parent / "report.schema.json"
VIEWS = [("security", "must"), ("platform", "key"), ("business", "experience")]


def _md(value: object) -> str:
    return str(value).replace("|", "\\|").replace("\n", " ")


@lru_cache(maxsize=32)
def _env(language: str, autoescape: bool, zone: str = "UTC") -> Environment:
    """One environment per language, escaping and time zone, kept for the process: its compiled templates are
    reused by every report and evidence page it renders (compiling them took most of a report's build)."""
    words = Wording(language)
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), undefined=StrictUndefined,
                      autoescape=select_autoescape(["j2"]) if autoescape else False,
                      trim_blocks=False, lstrip_blocks=False, keep_trailing_newline=True)
    env.globals["t"] = lambda key, **values: words.table.get(key, key).format(**values) if values \
        else words.table.get(key, key)
    env.globals["zone"] = zone
    env.globals["item_charts"] = ITEM_CHARTS  # charts drawn in their item's section
    env.globals["in_items"] = {name for names in ITEM_CHARTS.values() for name in names}
    env.filters["item_name"] = words.item
    env.filters["md"] = _md
    env.filters["signal"] = words.signal
    env.filters["cell"] = lambda value, column: cells.cell(value, column, words, zone)
    env.filters["header"] = lambda column, prefix="": cells.header(column, words, prefix)
    env.filters["when"] = lambda value: cells.local_time(value, zone)
    env.filters["num"] = lambda value, column="": (cells.quantity(value, column, words) if column else
                                                    cells.number(value)) if isinstance(value, (int, float)) \
        and not isinstance(value, bool) else ("" if value is None else str(value))
    env.filters["fig_value"] = lambda f: cells.figure_value(f.value, f.unit, words)
    env.filters["fig_unit"] = lambda f: cells.figure_unit(f.unit, words)
    env.filters["class_name"] = lambda tc: words.t(f"class.{tc}")
    env.filters["table_name"] = lambda name: words.table.get(f"evidence_table.{name}", name)
    env.filters["role"] = lambda role: role if language == "en" else words.t(f"role.{role}")  # English: as scored
    env.filters["short_hash"] = lambda h: str(h or "")[:12]
    env.filters["candidate"] = lambda c: candidate.short(c, words)
    env.filters["candidate_banner"] = lambda c: candidate.banner(c, words)
    env.filters["candidate_imitates"] = lambda c: candidate.imitates(c, words)
    env.filters["quote"] = lambda text: words.t("quote.mark", text=text)
    return env


def _of(report: Report, autoescape: bool) -> Environment:
    return _env(report.language, autoescape, report.subject.timezone)


def render_html(report: Report) -> str:
    return _of(report, True).get_template("report.html.j2").render(r=report, views=VIEWS)


def render_summary(report: Report) -> str:
    """``summary.html``: the one-page summary alone (A4 landscape when printed, 16:9 on a screen)."""
    return _of(report, True).get_template("summary_page.html.j2").render(r=report, views=VIEWS)


def render_markdown(report: Report) -> str:
    return _of(report, False).get_template("report.md.j2").render(r=report, views=VIEWS)


def render_table_page(language: str, zone: str, table: EvidenceTable, test_class: str) -> str:
    """One evidence table as a page of its own (``evidence/<class>/<table>.html``), worded and timed as the
    report is."""
    page = _env(language, True, zone).get_template("evidence_table.html.j2")
    return page.render(tb=table, test_class=test_class, language=language)


def json_schema() -> dict:
    """The documented schema of ``report.json`` (generated from the model, kept in ``report.schema.json``)."""
    schema = Report.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "gpupoc/report.schema.json"
    return schema


def write_outputs(report: Report, out_dir: str | Path) -> dict[str, Path]:
    """Write ``report.html``, ``summary.html``, ``report.md`` and ``report.json``; return their paths."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    paths = {"html": out / "report.html", "summary": out / "summary.html", "markdown": out / "report.md",
             "json": out / "report.json"}
    charts = out / "charts"
    charts.mkdir(exist_ok=True)
    for name, svg in report.charts.items():  # the Markdown shows them as images; the HTML inlines them
        (charts / f"{name}.svg").write_text(svg, encoding="utf-8")
    paths["html"].write_text(render_html(report), encoding="utf-8")
    paths["summary"].write_text(render_summary(report), encoding="utf-8")
    paths["markdown"].write_text(render_markdown(report), encoding="utf-8")
    paths["json"].write_text(json.dumps(report.model_dump(mode="json"), indent=1, ensure_ascii=False),
                             encoding="utf-8")
    return paths


if __name__ == "__main__":  # regenerate the schema file: python -m gpupoc.report.render
    SCHEMA_FILE.write_text(json.dumps(json_schema(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(SCHEMA_FILE)
