"""``gpupoc compare-demo`` (``make compare``): the default plan on each of the simulated cluster's scheduler
modes, one after the other (``gpupoc demo --platform NAME``), then ``gpupoc compare`` over their evidence.

``--faults volcano:gang-partial`` plants a fault profile in one candidate's cluster only; the others run on a
correct cluster. The comparison goes to ``<evidence_root>/comparisons/<UTC time>/`` (the GPU POC page lists it).
"""

from __future__ import annotations

import argparse
import shutil
import time
from datetime import datetime, timezone
from pathlib import Path

from gpupoc.exceptions import ComparisonRefused

DEFAULT_PLATFORMS = ("kube", "kueue", "volcano", "kai")


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
    from gpupoc.demo.runner import DemoOptions, run_demo, select_classes
    from gpupoc.demo.services import DemoPaths
    from gpupoc.pipeline.common import repo_root
    from gpupoc.plan import load_plan
    from gpupoc.sim.faults import parse_faults

    repo = repo_root()
    plan = Path(args.plan).resolve() if args.plan else repo / "plans" / "default.yaml"
    platforms = tuple(p.strip() for p in args.platforms.split(",") if p.strip())
    planted = parse_planted(args.faults, platforms)
    for profile in planted.values():
        parse_faults(profile)  # an unknown profile is refused before anything starts
    for name in platforms:
        load_plan(f"{plan}#{name}", kubeconfig_later=True)  # an unknown platform is refused before anything starts
    classes = select_classes(args.classes)
    stamp = datetime.now(timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    out = load_plan(plan, kubeconfig_later=True).evidence_root_path / "comparisons" / stamp
    (out / "plans").mkdir(parents=True, exist_ok=True)
    t0, labels, plans, walls = time.monotonic(), [], {}, {}
    for name in platforms:
        print(f"=== {name}: gpupoc demo --platform {name}" + (f" --faults {planted[name]}" if name in planted else ""))
        t = time.monotonic()
        res = run_demo(DemoOptions(repo=repo, plan=plan, platform=name, faults=planted.get(name, ""),
                                   classes=classes, timeout=args.timeout))
        walls[name] = time.monotonic() - t
        used = shutil.copy(DemoPaths(repo).plan, out / "plans" / f"{name}.yaml")  # the plan its runs read
        plans[name] = used
        labels.append(f"{name}={load_plan(used).evidence_root_path}")
        print(f"=== {name}: {res.outcome.decision} in {walls[name]:.0f} s")
    res = compare(labels, out, plan=plans, pdf=not args.no_pdf)
    print(f"comparison of {', '.join(platforms)} in {time.monotonic() - t0:.0f} s "
          f"({', '.join(f'{n} {w:.0f} s' for n, w in walls.items())})")
    for p in res.comparison.platforms:
        print(f"  {p.label:<10} {p.decision.value:<20} must items: {'all pass' if p.must_passed else 'NOT all pass'}")
    for kind, path in res.paths.items():
        print(f"{kind}: {path}")
    return 0


def register(subparsers) -> None:
    """Add ``compare-demo`` to the top-level ``gpupoc`` parser."""
    p = subparsers.add_parser("compare-demo", help="run the plan on each simulated platform and compare them",
                              description="gpupoc demo --platform NAME for each platform, one after the other, "
                              "then gpupoc compare over their evidence (docs/comparison.md).")
    p.add_argument("--plan", help="POC plan with a platforms list (default plans/default.yaml)")
    p.add_argument("--platforms", default=",".join(DEFAULT_PLATFORMS), help="the plan's platforms to run, in order")
    p.add_argument("--faults", default="", help="PLATFORM:PROFILE,...: a fault profile in one candidate's cluster")
    p.add_argument("--classes", default="", help="only these test classes, comma-separated (a quick look)")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds each platform's runs may take")
    p.add_argument("--no-pdf", action="store_true", help="do not print comparison.pdf")
    p.set_defaults(func=_run)
