"""``gpupoc compare --label NAME=ROOT_OR_BUNDLE ... --out DIR``."""

from __future__ import annotations

import argparse
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "compare", help="put one plan's evidence on several platforms side by side",
        description="Each --label NAME=PATH is a candidate: an evidence root or a sealed bundle of the same plan. "
                    "Each is judged by its own report (under DIR/platforms/NAME), then compared: comparison.json "
                    "(schema: comparison.schema.json), comparison.md, comparison.html and comparison.pdf (headless "
                    "Chromium). Evidence of different plans, files changed after they were sealed, and a bundle "
                    "that does not match its seal are refused. Exit codes: 0 written; 2 refused or bad input.")
    p.add_argument("--label", action="append", required=True, metavar="NAME=ROOT_OR_BUNDLE",
                   help="a candidate and its evidence (give two or more)")
    p.add_argument("--out", required=True, help="output directory")
    p.add_argument("--plan", help="POC plan YAML for the reports' settings (language, rules, thresholds)")
    p.add_argument("--scorecard", help="experience scores and sign-offs (YAML or JSON), for every candidate")
    p.add_argument("--no-pdf", action="store_true", help="do not print comparison.pdf")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from gpupoc.compare.build import compare

    res = compare(args.label, args.out, plan=args.plan, scorecard=args.scorecard, pdf=not args.no_pdf)
    for p in res.comparison.platforms:
        print(f"{p.label:<12} {p.decision.value:<20} must items {'all pass' if p.must_passed else 'NOT all pass'}  "
              f"({p.candidate.headline if p.candidate else 'not known whether real or simulated'})")
    for kind, path in res.paths.items():
        print(f"{kind}: {path}")
    for w in res.warnings:
        print(f"warning: {w}", file=sys.stderr)
    return 0
