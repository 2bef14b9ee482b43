"""``gpupoc bundle REPORT_DIR | --window START/END [--out FILE]`` and ``gpupoc bundle verify FILE``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "bundle", help="seal a report and its evidence in one .tar.gz, or verify one",
        description="gpupoc bundle REPORT_DIR: the report directory (all its formats), every class run it judged "
                    "(manifest, tables, validation results), the plan and its hash, and the Data Docs, with a "
                    "top-level SHA256SUMS and MANIFESTS.json. --window START/END (ISO 8601) takes every run whose "
                    "collection window ends within it and every report that judged only such runs. "
                    "gpupoc bundle verify FILE recomputes every hash and names each file changed, added or "
                    "removed. Exit codes: 0 written / verified; 1 verification found changes; 2 bad input.")
    p.add_argument("target", nargs="*", metavar="REPORT_DIR | verify FILE")
    p.add_argument("--window", metavar="START/END", help="bundle the runs of this window and their reports")
    p.add_argument("--root", help="evidence root for --window (default: the plan's)")
    p.add_argument("--plan", help="POC plan YAML (its evidence root and report directory, for --window)")
    p.add_argument("--out", help="the bundle file (default: <report dir>.bundle.tar.gz beside the report)")
    p.set_defaults(func=_run)


def _run(args: argparse.Namespace) -> int:
    from gpupoc.exceptions import GpupocError
    from gpupoc.report import bundle

    if args.target[:1] == ["verify"]:
        if len(args.target) != 2:
            raise GpupocError("bundle verify: expected one FILE, e.g. gpupoc bundle verify var/evidence/report/x.bundle.tar.gz")
        return _verify(Path(args.target[1]))
    if args.window:
        if args.target:
            raise GpupocError("bundle: give REPORT_DIR or --window START/END, not both")
        root, base = _window_places(args)
        spec = bundle.spec_for_window(root, args.window, base)
        default = root / "bundles" / f"window_{args.window.replace('/', '_').replace(':', '')}.tar.gz"
    elif len(args.target) == 1:
        spec = bundle.spec_for_report(args.target[0])
        default = bundle.bundle_path(spec.reports[0])
    else:
        raise GpupocError("bundle: expected REPORT_DIR, --window START/END, or verify FILE")
    out = bundle.create(spec, args.out or default)
    print(f"bundle: {out} ({out.stat().st_size / 1024:.0f} KiB; {len(spec.runs)} run(s), {len(spec.reports)} report(s))")
    check = bundle.verify(out)
    print(f"SHA256SUMS sha256: {check.sums_sha256} ({check.files} files)")
    return 0


def _window_places(args: argparse.Namespace) -> tuple[Path, Path | None]:
    if args.root:
        return Path(args.root), None
    from gpupoc.plan import DEFAULT_PLAN, load_plan
    from gpupoc.report.airflow import report_out_dir

    plan = load_plan(args.plan or DEFAULT_PLAN)
    return plan.evidence_root_path, report_out_dir(plan, "_").parent


def _verify(path: Path) -> int:
    from gpupoc.report.bundle import verify

    res = verify(path)
    for kind in ("changed", "added", "removed", "inconsistent"):
        for name in getattr(res, kind):
            print(f"{kind}: {name}")
    if res.ok:
        print(f"ok: {res.files} files match SHA256SUMS (sha256 {res.sums_sha256})")
        return 0
    print(f"{path}: {len(res.changed)} changed, {len(res.added)} added, {len(res.removed)} removed, "
          f"{len(res.inconsistent)} inconsistent", file=sys.stderr)
    return 1
