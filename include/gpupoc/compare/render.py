"""comparison.json (with ``comparison.schema.json``), comparison.md, comparison.html (self-contained: inline
styles and SVG) and comparison.pdf (the HTML printed by headless Chromium, as the report's PDF)."""

from __future__ import annotations

import json
import logging
from functools import lru_cache
from pathlib import Path

from jinja2 import Environment, FileSystemLoader, StrictUndefined, select_autoescape

from gpupoc.compare.models import CellStatus, Comparison, PlatformEntry
from gpupoc.exceptions import GpupocError, ToolMissing

TEMPLATES = Path(__file__).parent / "templates"
SCHEMA_FILE = Path(__file__).parent / "comparison.schema.json"
FILES = {"json": "comparison.json", "markdown": "comparison.md", "html": "comparison.html", "pdf": "comparison.pdf"}
WORDS = {CellStatus.PASS: "pass", CellStatus.FAIL: "FAIL", CellStatus.NOT_VERIFIED: "not verified",
         CellStatus.NOT_APPLICABLE: "not applicable", CellStatus.NOT_COMPARABLE: "not comparable"}

log = logging.getLogger(__name__)


def _value(v) -> str:
    """A figure's value as shown: "not measured" when absent, a counted one as count/out_of."""
    if v.value is None:
        return "not measured"
    if isinstance(v.value, float):
        return f"{v.value:g}"
    return str(v.value)


def headline(p: PlatformEntry) -> str:
    """What a column was, short: "real Kueue v0.17.0", "simulated mode of Volcano (…)"."""
    return p.candidate.headline if p.candidate else "not known whether real or simulated"


def who(label: str, c: Comparison) -> str:
    """A candidate named with what it was: "kueue (real Kueue v0.17.0)"."""
    p = next((p for p in c.platforms if p.label == label), None)
    return f"{label} ({headline(p)})" if p else label


@lru_cache(maxsize=2)
def _env(autoescape: bool) -> Environment:
    """Kept for the process, so its templates compile once."""
    env = Environment(loader=FileSystemLoader(str(TEMPLATES)), undefined=StrictUndefined,
                      autoescape=select_autoescape(["j2"]) if autoescape else False, keep_trailing_newline=True)
    env.filters["status"] = lambda s: WORDS[CellStatus(s)]
    env.filters["value"] = _value
    env.filters["md"] = lambda v: str(v).replace("|", "\\|").replace("\n", " ")
    env.filters["short_hash"] = lambda h: str(h or "")[:12]
    env.filters["headline"] = headline
    env.filters["who"] = lambda label, c: who(label, c)
    return env


def render_html(c: Comparison) -> str:
    css = (TEMPLATES / "comparison.css").read_text(encoding="utf-8")
    return _env(True).get_template("comparison.html.j2").render(c=c, css=css)


def render_markdown(c: Comparison) -> str:
    return _env(False).get_template("comparison.md.j2").render(c=c)


def json_schema() -> dict:
    """The documented schema of ``comparison.json`` (generated from the model, kept in the schema file)."""
    schema = Comparison.model_json_schema()
    schema["$schema"] = "https://json-schema.org/draft/2020-12/schema"
    schema["$id"] = "gpupoc/comparison.schema.json"
    return schema


def write_outputs(c: Comparison, out: Path, pdf: bool = True) -> tuple[dict[str, Path], list[str]]:
    """Every format under ``out``; the PDF left out with a warning when Chromium is missing or fails."""
    paths = {k: out / v for k, v in FILES.items() if k != "pdf"}
    paths["json"].write_text(json.dumps(c.model_dump(mode="json"), indent=1, ensure_ascii=False), encoding="utf-8")
    paths["markdown"].write_text(render_markdown(c), encoding="utf-8")
    charts = out / "charts"
    charts.mkdir(exist_ok=True)
    for name, svg in c.charts.items():  # the Markdown shows them as images; the HTML inlines them
        (charts / f"{name}.svg").write_text(svg, encoding="utf-8")
    paths["html"].write_text(render_html(c), encoding="utf-8")
    warnings: list[str] = []
    if pdf:
        from gpupoc.report.pdf import print_pdf

        try:
            paths["pdf"] = print_pdf(paths["html"], out / FILES["pdf"])
        except (ToolMissing, GpupocError) as exc:
            warnings.append(f"{FILES['pdf']} not written: {exc}")
            log.warning("%s", warnings[-1])
    return paths, warnings


if __name__ == "__main__":  # regenerate the schema file: python -m gpupoc.compare.render
    SCHEMA_FILE.write_text(json.dumps(json_schema(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(SCHEMA_FILE)
