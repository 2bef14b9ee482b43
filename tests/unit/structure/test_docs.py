"""The docs say what the code does: every check of the suites is on the checks page, the layers drawn in
docs/architecture.md are the import-graph test's, the README stays a front door to every page, each decision has one name,
and every link between the pages leads somewhere."""

from __future__ import annotations

import json
import re
from pathlib import Path

from gpupoc.common.outcomes import Decision
from gpupoc.sim.behaviours import Behaviour
from gpupoc.sim.faults import Fault

from .test_import_graph import LAYERS

REPO = Path(__file__).resolve().parents[3]
PACKAGE = REPO / "include" / "gpupoc"
DOCS = REPO / "docs"
README_MAX_LINES = 150
# Pages other changes are writing now (linked already); drop an entry once its page is in the tree.
PAGES_BEING_WRITTEN: set[str] = set()
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def pages() -> list[Path]:
    return [REPO / "README.md", *sorted(DOCS.glob("*.md"))]


def check_ids() -> set[str]:
    return {e["meta"]["check_id"] for f in (REPO / "expectations").glob("*.json")
            for e in json.loads(f.read_text(encoding="utf-8"))["expectations"]}


def test_every_check_of_the_suites_is_on_the_checks_page():
    text = (DOCS / "checks.md").read_text(encoding="utf-8")
    listed = set(re.findall(r"\*\*([A-Z]+-\d+)\*\*", text))
    assert check_ids() - listed == set(), f"checks missing from docs/checks.md: {sorted(check_ids() - listed)}"
    assert listed - check_ids() == set(), f"docs/checks.md lists checks no suite has: {sorted(listed - check_ids())}"


def applies_when_cell(meta: dict, reasons: dict[str, str]) -> str:
    """What the checks page's *applies when* column says of a check, from the check's own meta."""
    parts = [f"`{meta['requires']}`"] if meta.get("requires") else []
    parts += ["optional"] if meta.get("optional") else []
    if meta.get("applies_when"):
        parts.append("not applicable when " + reasons[meta["applies_when"]["reason"]])
    return ", ".join(parts) or "always"


def test_each_check_s_applies_when_on_the_checks_page_is_its_suite_s():
    reasons = json.loads((REPO / "include/gpupoc/validation/reasons.json").read_text(encoding="utf-8"))["en"]
    rows = dict(re.findall(r"^\| \*\*([A-Z]+-\d+)\*\* \|(?:[^|]*\|){3} ([^|]*?) \|",
                           (DOCS / "checks.md").read_text(encoding="utf-8"), re.M))
    wrong = {}
    for f in sorted((REPO / "expectations").glob("*.json")):
        for e in json.loads(f.read_text(encoding="utf-8"))["expectations"]:
            want = applies_when_cell(e["meta"], reasons)
            if rows.get(e["meta"]["check_id"]) != want:
                wrong[e["meta"]["check_id"]] = f"{rows.get(e['meta']['check_id'])!r}, the suite says {want!r}"
    assert wrong == {}, f"docs/checks.md's applies-when column: {wrong}"


def drawn_layers() -> list[set[str]]:
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    block = text.split("<!-- layers (top first)", 1)[1].split("```text\n", 1)[1].split("```", 1)[0]
    return [{n.strip() for n in re.split(r"\s{2,}", line, maxsplit=1)[0].split(",")} for line in block.splitlines()]


def test_the_layers_drawn_in_the_architecture_page_are_the_import_graph_tests():
    assert drawn_layers() == LAYERS, f"docs/architecture.md draws {drawn_layers()}, the import-graph test has {LAYERS}"


def test_the_readme_is_a_front_door():
    lines = (REPO / "README.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= README_MAX_LINES, f"README.md has {len(lines)} lines; move reference material to docs/"


def test_the_readme_links_every_page_of_the_docs():
    text = (REPO / "README.md").read_text(encoding="utf-8")
    linked = {t.partition("#")[0] for t in LINK.findall(text)}
    every = {p.relative_to(REPO).as_posix() for p in DOCS.glob("*.md")} | PAGES_BEING_WRITTEN
    assert every - linked == set(), f"README.md links no {sorted(every - linked)}: add them to 'Where to read next'"


def test_every_benchmark_is_on_the_benchmarks_page():
    text = (DOCS / "benchmarks-and-limits.md").read_text(encoding="utf-8")
    missing = [p.name for p in sorted((REPO / "bench").glob("*.py")) if f"`bench/{p.name}`" not in text]
    assert missing == [], f"benchmarks missing from docs/benchmarks-and-limits.md: {missing}"


def test_each_decision_has_one_display_name_in_the_report_and_the_glossary():
    strings = json.loads((REPO / "include/gpupoc/report/templates/strings.en.json").read_text(encoding="utf-8"))
    glossary = (DOCS / "glossary.md").read_text(encoding="utf-8")
    for d in Decision:
        name = strings[f"decision.{d.value}"]
        assert f"| {name} | `{d.value}` |" in glossary, f"the glossary does not name {d.value} {name!r}"


def where_it_lives() -> str:
    text = (DOCS / "architecture.md").read_text(encoding="utf-8")
    return text.split("## Where it lives", 1)[1]


def defines(source: str, name: str) -> bool:
    """Whether a module defines ``name``: a function, a class, or an assigned or declared name."""
    return re.search(rf"(?:def|class)\s+{name}\b|^\s*(?:self\.)?{name}\s*(?::[^=\n]*)?=|^\s*{name}\s*:",
                     source, re.M) is not None


def test_every_module_and_name_the_where_it_lives_table_gives_is_in_the_package():
    files = [p for p in PACKAGE.rglob("*.py") if "node_modules" not in p.parts]
    pairs = re.findall(r"`([\w/]+\.py)` `([\w.]+)`", where_it_lives())
    assert len(pairs) > 30, "docs/architecture.md's where-it-lives tables name modules as `path.py` `name`"
    missing = []
    for path, name in pairs:
        sources = [f.read_text(encoding="utf-8") for f in files if f.as_posix().endswith("/" + path)]
        if not any(defines(s, name.rsplit(".", 1)[-1]) for s in sources):
            missing.append(f"{path} {name}" + ("" if sources else " (no such module)"))
    assert missing == [], f"docs/architecture.md names what the package does not define: {missing}"


def test_the_definition_finder_tells_a_definition_from_a_mention():
    assert defines("class Kai(Gang):\n    def session(self):\n        self.opaque = x\n", "opaque")
    assert defines("    drop_warnings: bool = False\n", "drop_warnings")
    assert not defines("    return session(opaque)\n", "opaque")


def test_every_profile_is_on_the_profiles_page_and_in_the_where_it_lives_table():
    profiles = (DOCS / "profiles.md").read_text(encoding="utf-8")
    table = where_it_lives()
    names = [p.value for p in (*Fault, *Behaviour)]
    assert [n for n in names if f"| `{n}` |" not in profiles] == [], "profiles missing from docs/profiles.md"
    assert [n for n in names if f"`{n}`" not in table] == [], "profiles missing from docs/architecture.md"


def anchors(page: Path) -> set[str]:
    """GitHub's anchors of a page's headings: lower case, punctuation dropped, spaces to hyphens."""
    out = set()
    for line in page.read_text(encoding="utf-8").splitlines():
        if line.startswith("#"):
            title = line.lstrip("#").strip().lower()
            out.add(re.sub(r"\s", "-", re.sub(r"[^\w\s-]", "", title)))
    return out


def test_every_relative_link_between_the_pages_leads_to_a_file_and_heading():
    broken = []
    for page in pages():
        for target in LINK.findall(page.read_text(encoding="utf-8")):
            if "://" in target or target.startswith("mailto:"):
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            rel = dest.relative_to(REPO).as_posix() if dest.is_relative_to(REPO) else str(dest)
            if rel in PAGES_BEING_WRITTEN:
                continue
            if not dest.exists():
                broken.append(f"{page.relative_to(REPO)}: {target} (no such file)")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                broken.append(f"{page.relative_to(REPO)}: {target} (no such heading)")
    assert broken == [], "broken links: " + "; ".join(broken)


def test_the_link_checker_knows_github_s_anchors(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("# Known limits\n## Replay in the test classes\n### `kube` mode (kube-scheduler)\n")
    assert anchors(page) == {"known-limits", "replay-in-the-test-classes", "kube-mode-kube-scheduler"}


def test_a_page_being_written_leaves_the_list_once_it_is_there():
    there = sorted(p for p in PAGES_BEING_WRITTEN if (REPO / p).exists())
    assert there == [], f"{there} exist now: drop them from PAGES_BEING_WRITTEN so their links are checked"
