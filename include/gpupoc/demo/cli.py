"""``gpupoc demo [--faults NAME,...] [--behaviour NAME,...] [--plan FILE]``; ``gpupoc down`` (``register_down``)
stops what it started."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def _repo() -> Path:
    from gpupoc.pipeline.common import repo_root

    return repo_root()


def _demo(args: argparse.Namespace) -> int:
    from gpupoc.demo.runner import DemoOptions, main_demo, plan_classes, select_classes
    from gpupoc.demo.services import check_sim_profiles

    check_sim_profiles(args.faults or "", args.behaviour or "")  # an unknown profile or class is refused first
    if args.cluster == "kwok":
        from gpupoc.demo.kwok import check_kwok_options

        check_kwok_options(args.faults or "", args.behaviour or "", args.cluster_from_manifests)
    select_classes(args.classes)  # an unknown class is refused before anything starts
    repo = _repo()
    plan = Path(args.plan) if args.plan else repo / "plans" / "default.yaml"
    plan = plan if plan.is_absolute() else Path.cwd() / plan
    classes = plan_classes(plan, args.classes)  # none named: the classes the plan enables
    var_dir = Path(args.var_dir).resolve() if args.var_dir else None
    return main_demo(DemoOptions(repo=repo, plan=plan.resolve(), faults=args.faults or "",
                                 behaviours=args.behaviour or "", behaviour_seed=args.behaviour_seed,
                                 classes=classes, sequential=not args.together, port=args.port,
                                 timeout=args.timeout, from_manifests=args.cluster_from_manifests,
                                 platform=args.platform or "", var_dir=var_dir, report=not args.no_report,
                                 cluster=args.cluster))


def _down(args: argparse.Namespace) -> int:
    from gpupoc.demo.candidates import stop_with_candidates
    from gpupoc.demo.services import DemoPaths

    var_dir = Path(args.var_dir).resolve() if args.var_dir else None
    result = stop_with_candidates(DemoPaths(_repo(), var_dir))
    print(json.dumps(result or {"status": "nothing recorded as running"}, indent=2))
    return 0


def register(subparsers) -> None:
    """Add ``demo`` to the top-level ``gpupoc`` parser."""
    p = subparsers.add_parser("demo", help="run the whole POC on the simulated cluster and print the decision",
                              description="Start the simulated cluster, monitoring and Airflow, run the five test "
                              "classes and the report; every process is recorded in var/demo/pids.json.")
    p.add_argument("--faults", default="", help="fault profiles of the cluster, comma-separated "
                   "(e.g. cross-tenant-logs); default: a correctly behaving cluster")
    p.add_argument("--behaviour", default="", help="behaviour profiles of the correct cluster, comma-separated "
                   "(e.g. release-staggered,throttled); default: none")
    p.add_argument("--behaviour-seed", type=int, default=0, help="seed of the seeded behaviours (default 0)")
    p.add_argument("--plan", help="POC plan (default plans/default.yaml); its cluster settings are pointed at the "
                   "demo's cluster in var/demo/plan.yaml")
    p.add_argument("--platform", default="", help="one of the plan's platforms (its name): its adapter and "
                   "scheduler mode, evidence under <evidence_root>/<name> (docs/comparison.md)")
    p.add_argument("--classes", default="", help="run only these test classes, comma-separated (e.g. "
                   "tenant_isolation; default: the classes the plan enables); the report takes the latest "
                   "earlier evidence of the others")
    p.add_argument("--together", action="store_true",
                   help="trigger the five test classes at once and let their GPU lease order them "
                   "(default: each after the previous one ended, which is faster on 2 cores)")
    p.add_argument("--cluster-from-manifests", action="store_true",
                   help="start the cluster empty and give it the plan as a real cluster: gpupoc cluster manifests "
                   "applied with kubectl, gpupoc cluster kubeconfig, gpupoc preflight (which must pass)")
    p.add_argument("--cluster", choices=("sim", "kwok"), default="sim",
                   help="sim: the simulated cluster (default); kwok: a real Kubernetes control plane (built by `make "
                   "control-plane`) with the plan's pools as KWOK nodes, given the plan as a real cluster is "
                   "(manifests, kubeconfig, preflight); docs/real-cluster.md")
    p.add_argument("--port", type=int, default=8080, help="Airflow UI port when free (else any free port)")
    p.add_argument("--timeout", type=float, default=3600.0, help="seconds the runs may take")
    p.add_argument("--var-dir", default="", help="the demo's state directory (cluster, monitoring, Airflow, pid "
                   "file) instead of var/; make compare gives each candidate var/compare/<platform>")
    p.add_argument("--no-report", action="store_true", help="run the classes only: poc_report stays paused "
                   "(make compare judges each candidate's evidence with gpupoc compare)")
    p.set_defaults(func=_demo)


def register_down(subparsers) -> None:
    """Add ``down`` to the top-level ``gpupoc`` parser."""
    d = subparsers.add_parser("down", help="stop every process the demo and make compare started "
                              "(var/demo/pids.json, var/compare/*/demo/pids.json), by pid")
    d.add_argument("--var-dir", default="", help="the state directory a `gpupoc demo --var-dir` used (default var/)")
    d.set_defaults(func=_down)
