"""Benchmark: print the report to PDF with headless Chromium (gpupoc.report.pdf).

Builds the report from synthetic evidence of a correctly behaving platform (every test class, validated)
or from an evidence root given with --root (copied first: nothing is written into it), prints report.pdf
--repeat times and prints the page count, the file size and the median wall time of a print.
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--root", help="an evidence root to report on (default: synthetic evidence)")
    ap.add_argument("--language", choices=["en", "zh"], default="en")
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)

    from pypdf import PdfReader

    from gpupoc.exceptions import ToolMissing
    from gpupoc.report import build_report
    from gpupoc.report.pdf import print_report_pdf
    from gpupoc.validation.synthetic import write_good_root

    with tempfile.TemporaryDirectory(prefix="gpupoc-bench-pdf-") as tmp:
        root = Path(tmp) / "evidence"
        if args.root:
            shutil.copytree(args.root, root)
        else:
            write_good_root(root)
        out = Path(tmp) / "report"
        build_report(root, out_dir=out, language=args.language)
        times = []
        try:
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                pdf = print_report_pdf(out)
                times.append(time.perf_counter() - t0)
        except ToolMissing as exc:
            print(f"skipped: {exc}", file=sys.stderr)
            return 1
        pages = len(PdfReader(str(pdf)).pages)
        print(f"report.pdf ({args.language}, {'--root ' + args.root if args.root else 'synthetic evidence'}): "
              f"{pages} A4 pages, {pdf.stat().st_size / 1024:.0f} KiB; print time median of {len(times)}: "
              f"{statistics.median(times):.2f} s (runs: {', '.join(f'{t:.2f}' for t in times)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
