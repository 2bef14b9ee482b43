"""``gpupoc preflight --plan P [--json]``: one line per check, ✓ or ✗ with the fix; exit 1 on any ✗."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(subparsers) -> None:
    p = subparsers.add_parser("preflight", help="check that the cluster and its evidence sources hold what the "
                              "plan needs, before the first run",
                              description="API and version; identities, their verbs and no cross-tenant read; the "
                              "adapter's API groups and queues; quotas and priority classes; pools; images; the audit "
                              "source's freshness; Prometheus series; Alertmanager and its receiver; Airflow "
                              "connections. Exit 0 when every check passes, 1 otherwise.")
    p.add_argument("--plan", required=True, help="the POC plan")
    p.add_argument("--json", action="store_true", help="print the results as JSON")
    p.add_argument("--kubeconfig", help="instead of the plan's platform.kubeconfig")
    p.add_argument("--class", dest="test_class", default=None,
                   help="only the prerequisites of one test class (what its DAG checks first)")
    p.add_argument("--no-images", action="store_true", help="do not pull the catalogue's images")
    p.add_argument("--stack-dir", type=Path, default=None,
                   help="the local monitoring stack's directory (default var/monitoring)")
    p.set_defaults(func=cmd_preflight)


def cmd_preflight(args: argparse.Namespace) -> int:
    from gpupoc.pipeline.k8s import ClientFactory
    from gpupoc.plan import TestClass, load_plan
    from gpupoc.preflight.context import PreflightContext
    from gpupoc.preflight.runner import run_preflight

    plan = load_plan(args.plan)
    test_class = TestClass(args.test_class).value if args.test_class else None
    factory = None
    if args.kubeconfig:
        factory = ClientFactory(args.kubeconfig, timeout=plan.cluster.preflight.api_timeout_seconds)
    from gpupoc.preflight.airflow_checks import named_connections

    # Airflow is asked only about connections the plan names (asking costs seconds outside a task)
    ctx = PreflightContext(plan, factory, test_class=test_class, pull_images=not args.no_images,
                           stack_dir=args.stack_dir, use_airflow=bool(named_connections(plan)))
    report = run_preflight(ctx)
    if args.json:
        json.dump(report.to_dict(), sys.stdout, indent=2, ensure_ascii=False)
        sys.stdout.write("\n")
    else:
        for r in report.results:
            print(r.line())
        n = len(report.failures)
        if not report.api_unreachable:  # an unreachable API is one line, the one above
            print(f"preflight of plan {plan.name!r}: " + (f"{n} check(s) failed" if n else "every check passed"))
    return 0 if report.passed else 1
