"""Benchmark: how long each output of the report takes, and how big the PDF and the bundle are.

On synthetic evidence of a correctly behaving platform (every test class, validated) or on a copy of an
evidence root given with --root (nothing is written into it). Prints, median of --repeat runs: the build
(judging every item from the stored validations and writing every text format), then each format rendered on
its own from the built report (report.html, summary.html, report.md, report.json, report.junit.xml), printing
report.pdf with headless Chromium, and sealing and verifying the bundle; with the PDF's page count and the
bundle's size.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Callable


def _median(fn: Callable[[], object], repeat: int) -> tuple[float, object]:
    times, out = [], None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times), out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", help="an evidence root to report on (default: synthetic evidence)")
    ap.add_argument("--language", choices=["en", "zh"], default="en")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    from pypdf import PdfReader

    from gpupoc.exceptions import ToolMissing
    from gpupoc.report.build import build_report
    from gpupoc.report.bundle import create, spec_for_report, verify
    from gpupoc.report.junit import junit_xml
    from gpupoc.report.pdf import print_report_pdf
    from gpupoc.report.publish import validate_first
    from gpupoc.report.inputs import select
    from gpupoc.report.render import render_html, render_markdown, render_summary
    from gpupoc.validation.synthetic import write_good_root

    with tempfile.TemporaryDirectory(prefix="gpupoc-bench-formats-") as tmp:
        root = Path(tmp) / "evidence"
        if args.root:
            shutil.copytree(args.root, root, ignore=shutil.ignore_patterns("report", "*.tar.gz"))
            validate_first(select(root))
        else:
            write_good_root(root)
        out = root / "report" / "bench"
        rows = []
        build_s, res = _median(lambda: build_report(root, out_dir=out, language=args.language), args.repeat)
        rows.append(("build: judge + html, summary, md, json, junit", build_s, ""))
        report = res.report  # type: ignore[union-attr]
        for name, fn in (("report.html", lambda: render_html(report)), ("summary.html", lambda: render_summary(report)),
                         ("report.md", lambda: render_markdown(report)),
                         ("report.json", lambda: json.dumps(report.model_dump(mode="json"), ensure_ascii=False)),
                         ("report.junit.xml", lambda: junit_xml(report))):
            s, text = _median(fn, args.repeat)
            rows.append((name, s, f"{len(text) / 1024:.0f} KiB"))
        try:
            s, pdf = _median(lambda: print_report_pdf(out), args.repeat)
            rows.append(("report.pdf", s, f"{len(PdfReader(str(pdf)).pages)} A4 pages, "
                                          f"{pdf.stat().st_size / 1024:.0f} KiB"))  # type: ignore[union-attr]
        except ToolMissing as exc:
            rows.append(("report.pdf", float("nan"), f"skipped: {exc}"))
        bundle = Path(tmp) / "bundle.tar.gz"
        s, _ = _median(lambda: create(spec_for_report(out), bundle), args.repeat)
        rows.append(("bundle", s, f"{bundle.stat().st_size / 1024:.0f} KiB, {verify(bundle).files} files"))
        s, _ = _median(lambda: verify(bundle), args.repeat)
        rows.append(("bundle verify", s, ""))
    where = f"--root {args.root}" if args.root else "synthetic evidence"
    print(f"report outputs ({args.language}, {where}), median of {args.repeat}:")
    for name, s, note in rows:
        print(f"  {name:<48} {s:7.2f} s  {note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
