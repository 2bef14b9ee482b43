"""``gpupoc compare-demo`` (``make compare``): ``plans/compare.yaml`` (the default plan with one gang in the
congestion wave, so the gang checks judge every candidate) on each of the simulated cluster's scheduler
modes side by side (``gpupoc demo --platform NAME`` each in a process of its own, ``gpupoc.demo.candidates``),
then ``gpupoc compare`` over their evidence.

``--faults volcano:gang-partial`` plants a fault profile in one candidate's cluster only; the others run on a
correct cluster. ``--cluster kwok`` (``make compare CLUSTER=kwok``) runs kube-scheduler and Kueue on the real
control plane (``gpupoc demo --cluster kwok``) and the others as simulated modes (``gpupoc.compare.routing``);
each column says which. The comparison goes to ``<evidence_root>/comparisons/<UTC time>/`` (the GPU POC page
lists it).
"""

from __future__ import annotations

import argparse
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

from gpupoc.exceptions import ComparisonRefused

DEFAULT_PLATFORMS = ("kube", "kueue", "volcano", "kai")
COMPARE_PLAN = "compare.yaml"  # default.yaml with one gang in the congestion wave (tests/unit/plan/test_compare_plan.py)


def parse_planted(value: str, platforms: tuple[str, ...]) -> dict[str, str]:
    """``name:profile[,name:profile]`` -> {name: "profile,..."}; each name one of ``platforms``."""
    out: dict[str, list[str]] = {}
    for part in filter(None, (p.strip() for p in (value or "").split(","))):
        name, sep, profile = part.partition(":")
        if not sep or not profile or name not in platforms:
            raise ComparisonRefused(f"--faults {part!r}: expected PLATFORM:PROFILE with PLATFORM one of "
                                    f"{', '.join(platforms)} (e.g. volcano:gang-partial): a defect goes into one "
                                    "candidate only")
        out.setdefault(name, []).append(profile)
    return {k: ",".join(v) for k, v in out.items()}


def _run(args: argparse.Namespace) -> int:
    from gpupoc.compare import compare
    from gpupoc.compare.routing import check_planted, describe, plan_platforms, route
    from gpupoc.demo.candidates import candidates_for, run_candidates
    from gpupoc.demo.runner import select_classes
    from gpupoc.demo.services import DemoPaths, check_sim_profiles
    from gpupoc.pipeline.common import repo_root
    from gpupoc.plan import load_plan

    paths = DemoPaths(repo_root())
    plan = Path(args.plan).resolve() if args.plan else paths.repo / "plans" / COMPARE_PLAN
    platforms = tuple(p.strip() for p in args.platforms.split(",") if p.strip())
    planted = parse_planted(args.faults, platforms)
    for profile in planted.values():
        check_sim_profiles(profile)  # an unknown profile is refused before anything starts
    routes = route(plan_platforms(plan, platforms), args.cluster)  # an unknown platform is refused here
    check_planted(routes, planted)
    if len(platforms) < 2:
        raise ComparisonRefused(f"--platforms {args.platforms!r}: a comparison needs at least two candidates")
    classes = select_classes(args.classes)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = load_plan(plan, kubeconfig_later=True).evidence_root_path / "comparisons" / stamp
    for line in describe(routes):
        print(f"=== {line}", flush=True)
    cands = candidates_for(paths, platforms, planted, {r.name: r.cluster for r in routes})
    together = args.jobs if 0 < args.jobs < len(cands) else len(cands)
    print(f"=== {', '.join(c.name for c in cands)}: gpupoc demo --platform NAME, {together} at a time (each starts once the previous one's Airflow is up), each with its "
          f"own cluster, monitoring and Airflow under {cands[0].var_dir.parent}/NAME"
          + (f"; faults {args.faults}" if planted else ""), flush=True)
    t0 = time.monotonic()
    ended = run_candidates(cands, plan, classes, args.timeout, paths, jobs=args.jobs,
                           out=lambda line: print(line, flush=True))
    for c in cands:
        e = ended.get(c.name)
        print(f"=== {c.name}: " + (f"its classes ended {_states(e.result)} in {e.wall_seconds:.0f} s" if e and e.ok
                                   else f"its demo failed (exit {e.returncode if e else '?'}); see {c.log}"))
    done = [c for c in cands if c.name in ended and ended[c.name].ok]
    if len(done) < 2:
        print("=== fewer than two candidates ran: nothing to compare", flush=True)
        return 1
    (out / "plans").mkdir(parents=True, exist_ok=True)
    plans = {c.name: shutil.copy(c.plan, out / "plans" / f"{c.name}.yaml") for c in done}  # the plans its runs read
    labels = [f"{c.name}={load_plan(plans[c.name]).evidence_root_path}" for c in done]
    res = compare(labels, out, plan=plans, pdf=not args.no_pdf)
    print(f"comparison of {', '.join(c.name for c in done)} in {time.monotonic() - t0:.0f} s "
          f"({', '.join(f'{n} {e.wall_seconds:.0f} s' for n, e in ended.items())})")
    for p in res.comparison.platforms:
        print(f"  {p.label:<10} {p.decision.value:<20} must items: {'all pass' if p.must_passed else 'NOT all pass'}"
              f"  ({p.candidate.headline if p.candidate else 'not known whether real or simulated'})")
    for kind, path in res.paths.items():
        print(f"{kind}: {path}")
    missing = [c for c in cands if c not in done]
    if missing:
        print(f"=== not compared: {', '.join(c.name for c in missing)} (its demo failed; see "
              f"{', '.join(str(c.log) for c in missing)})", flush=True)
    return 1 if missing else 0


def _states(result: dict) -> str:
    runs = result.get("runs") or {}
    return ", ".join(f"{d.removeprefix('poc_')} {s}" for d, s in runs.items()) or "(no runs)"


def register(subparsers) -> None:
    """Add ``compare-demo`` to the top-level ``gpupoc`` parser."""
    p = subparsers.add_parser("compare-demo", help="run the plan on each simulated platform and compare them",
                              description="gpupoc demo --platform NAME for each platform, side by side (each its own "
                              "cluster, monitoring and Airflow under var/compare/NAME), then gpupoc compare over "
                              "their evidence (docs/comparison.md).")
    p.add_argument("--plan", help="POC plan with a platforms list (default plans/compare.yaml)")
    p.add_argument("--platforms", default=",".join(DEFAULT_PLATFORMS), help="the plan's platforms to run, in order")
    p.add_argument("--faults", default="", help="PLATFORM:PROFILE,...: a fault profile in one candidate's cluster")
    p.add_argument("--classes", default="", help="only these test classes, comma-separated (a quick look)")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds each platform's runs may take")
    p.add_argument("--cluster", choices=("sim", "kwok"), default="sim",
                   help="sim: every candidate on the simulated cluster (default); kwok: kube-scheduler and Kueue on "
                   "the real control plane (built by `make control-plane`), Volcano, KAI and HAMi as the simulated "
                   "cluster's modes; each column says which (docs/comparison.md)")
    p.add_argument("--jobs", type=int, default=0, help="candidates run at once (default 0: all together)")
    p.add_argument("--no-pdf", action="store_true", help="do not print comparison.pdf")
    p.set_defaults(func=_run)
