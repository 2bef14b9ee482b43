"""``gpupoc report RUN_DIR``: validate what is not validated yet, then rebuild the report outside Airflow."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report", help="build the go-live report from stored evidence",
        description="RUN_DIR is an evidence root (latest run of each test class), one run directory "
                    "(<root>/<dag_id>/<run_id>, replacing the latest of its class) or a report directory "
                    "holding report-inputs.json (rebuilds the same report). Runs without a stored validation are "
                    "validated first. Writes report.html (summary on top), summary.html, report.md, report.json, "
                    "report.junit.xml, report.pdf (with headless Chromium; without it, a warning) and the sealed "
                    "bundle <out>.bundle.tar.gz. Exit codes: 0 report written; 1 decision is postpone (only with "
                    "--exit-code); 2 bad input (message on stderr).")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--out", help="output directory (default: <RUN_DIR>/report, or RUN_DIR for a report directory)")
    p.add_argument("--scorecard", help="experience scores and sign-offs by named reviewers (YAML or JSON)")
    p.add_argument("--plan", help="POC plan YAML: language, decision rules, reviewers; its thresholds are compared "
                   "with those each run stored (a finding when they differ), never applied")
    p.add_argument("--suites", help="expectation suites directory (default: expectations/)")
    p.add_argument("--language", choices=["en", "zh"], help="overrides the plan's language")
    p.add_argument("--revalidate", action="store_true", help="run the suites again even where results are stored")
    p.add_argument("--no-pdf", action="store_true", help="do not print report.pdf")
    p.add_argument("--no-bundle", action="store_true", help="do not write the sealed bundle")
    p.add_argument("--exit-code", action="store_true",
                   help="exit 1 when the decision is postpone, so a CI job can gate on it")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from gpupoc.report.console import report_lines, warning_line
    from gpupoc.report.models import Decision
    from gpupoc.report.publish import publish_report

    pub = publish_report(args.run_dir, out_dir=args.out, plan=args.plan, scorecard=args.scorecard,
                         suites_dir=args.suites, revalidate=args.revalidate, language=args.language,
                         pdf=not args.no_pdf, bundle=not args.no_bundle)
    r = pub.build.report
    for line in report_lines(r, pub.paths):
        print(line)
    for w in pub.warnings:
        print(warning_line(r, w), file=sys.stderr)
    return 1 if args.exit_code and r.decision is Decision.POSTPONE else 0
