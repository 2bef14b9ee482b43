"""``gpupoc report RUN_DIR``: rebuild the report outside Airflow from stored evidence."""

from __future__ import annotations

import argparse


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "report", help="build the go-live report from stored evidence",
        description="RUN_DIR is an evidence root (latest run of each test class), one run directory "
                    "(<root>/<dag_id>/<run_id>, replacing the latest of its class) or a report directory "
                    "holding report-inputs.json (rebuilds the same report). Writes report.html, .md, .json and "
                    ".junit.xml. Exit codes: 0 report written; 1 decision is postpone (only with --exit-code); "
                    "2 bad input (message on stderr).")
    p.add_argument("run_dir", metavar="RUN_DIR")
    p.add_argument("--out", help="output directory (default: <RUN_DIR>/report, or RUN_DIR for a report directory)")
    p.add_argument("--scorecard", help="experience scores by named reviewers (YAML or JSON)")
    p.add_argument("--plan", help="POC plan YAML: language, decision rules, thresholds")
    p.add_argument("--suites", help="expectation suites directory (default: expectations/)")
    p.add_argument("--language", choices=["en", "zh"], help="overrides the plan's language")
    p.add_argument("--revalidate", action="store_true", help="run the suites again even where results are stored")
    p.add_argument("--exit-code", action="store_true",
                   help="exit 1 when the decision is postpone, so a CI job can gate on it")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from gpupoc.report.build import build_report
    from gpupoc.report.models import Decision

    res = build_report(args.run_dir, out_dir=args.out, plan=args.plan, scorecard=args.scorecard,
                       suites_dir=args.suites, revalidate=args.revalidate, language=args.language)
    r = res.report
    print(f"decision: {r.decision.value}")
    for it in r.items:
        print(f"  {it.tier.value:<10} {it.id:<24} {it.verdict.value}")
    for kind, path in res.paths.items():
        print(f"{kind}: {path}")
    return 1 if args.exit_code and r.decision is Decision.POSTPONE else 0
