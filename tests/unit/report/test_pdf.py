"""report.pdf printed by headless Chromium, read back with pypdf: A4 pages, the summary alone on the first
page, the decision with its scope and findings on the second, each other section from a new page; clear
errors when Chromium is missing or fails."""

import unicodedata

import pytest
from pypdf import PdfReader

from gpupoc.exceptions import GpupocError, ToolMissing
from gpupoc.report import build_report
from gpupoc.report.pdf import PDF_FILE, PrintFailed, print_pdf, print_report_pdf
from gpupoc.report.render import strings

A4_POINTS = (595.28, 841.89)
# sections that start a page (the decision, scope and findings share the second; sources and notes follow)
PAGE_SECTIONS = ["section.signoff", "view.security", "view.platform", "view.business", "section.failure_records",
                 "section.charts", "section.stability"]


@pytest.fixture(scope="module")
def chromium():
    from gpupoc.common.chromium import chromium_binary

    try:
        return chromium_binary()
    except ToolMissing as exc:
        pytest.skip(str(exc))


def _squash(text):
    """Text without whitespace (the PDF's text layer adds spaces where the font changes), NFKC-folded."""
    return "".join(unicodedata.normalize("NFKC", text).split())


def _pages(pdf):
    """The reader and each page's text (ligatures such as "ﬀ" unfolded)."""
    reader = PdfReader(str(pdf))
    return reader, [unicodedata.normalize("NFKC", page.extract_text() or "") for page in reader.pages]


def test_report_prints_to_a4_pages_with_the_summary_first_and_a_page_per_section(chromium, good_root, tmp_path):
    res = build_report(good_root, out_dir=tmp_path)
    pdf = print_report_pdf(tmp_path)
    assert pdf == tmp_path / PDF_FILE
    reader, texts = _pages(pdf)
    t = strings("en")
    assert len(PAGE_SECTIONS) + 2 <= len(texts) <= 22, f"{len(texts)} pages"
    for page in reader.pages:
        w, h = float(page.mediabox.width), float(page.mediabox.height)
        assert abs(w - A4_POINTS[0]) < 2 and abs(h - A4_POINTS[1]) < 2, f"page is {w} x {h} pt, not A4"
    first, second = texts[0], texts[1]
    assert first.lstrip().startswith(t["title"])
    assert t["section.decision"] in first and t[f"decision.{res.report.decision.value}"] in first
    assert t["summary.coverage"] in first and t["section.findings"] not in first, "the summary has a page of its own"
    assert t["section.findings"] in second and t["section.scope"] in second and t["view.security"] not in second
    starts = [text.lstrip().splitlines()[0] for text in texts[2:] if text.strip()]
    for key in PAGE_SECTIONS:
        assert any(line.startswith(t[key]) for line in starts), f"no page starts with {t[key]!r}: {starts}"
    assert not list(tmp_path.glob(".*.partial")), "the partial file is renamed, never left behind"


def test_chinese_report_embeds_a_chinese_font(chromium, good_root, tmp_path):
    build_report(good_root, out_dir=tmp_path, language="zh")
    reader, texts = _pages(print_report_pdf(tmp_path))
    assert _squash(texts[0]).startswith(_squash(strings("zh")["title"]))
    fonts = {str(f.get_object().get("/BaseFont", "")) for f in reader.pages[0]["/Resources"]["/Font"].values()}
    assert any("WenQuanYi" in f or "CJK" in f for f in fonts), \
        f"no Chinese font in the PDF (fonts {fonts}); install fonts-wqy-microhei (make test-deps)"


def test_missing_chromium_names_the_binary_and_the_fix(tmp_path, monkeypatch):
    (tmp_path / "report.html").write_text("<html><body>x</body></html>")
    monkeypatch.setenv("GPUPOC_CHROMIUM", str(tmp_path / "no-chromium"))
    with pytest.raises(ToolMissing, match=r"no-chromium: not an executable file.*make test-deps"):
        print_report_pdf(tmp_path)


def test_chromium_that_fails_leaves_no_pdf_and_says_so(tmp_path, monkeypatch):
    (tmp_path / "report.html").write_text("<html><body>x</body></html>")
    (tmp_path / PDF_FILE).write_bytes(b"%PDF- an older print")
    monkeypatch.setenv("GPUPOC_CHROMIUM", "/bin/false")
    with pytest.raises(PrintFailed, match=r"/bin/false exited 1 without writing report\.pdf"):
        print_report_pdf(tmp_path)
    assert not (tmp_path / PDF_FILE).exists(), "an older PDF that no longer matches the HTML must not remain"


def test_missing_html_says_to_build_the_report_first(tmp_path):
    with pytest.raises(GpupocError, match=r"no such HTML file.*gpupoc report"):
        print_pdf(tmp_path / "report.html", tmp_path / PDF_FILE)
