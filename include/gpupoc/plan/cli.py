"""``gpupoc plan validate FILE``: list every problem of a plan, or summarise it."""

from __future__ import annotations

import argparse
import sys

from gpupoc.exceptions import ConfigError


def register(subparsers) -> None:
    """Add the ``plan`` area to the top-level ``gpupoc`` parser."""
    plan = subparsers.add_parser("plan", help="work with POC plans")
    sub = plan.add_subparsers(dest="plan_command", required=True)
    validate = sub.add_parser("validate", help="check a plan file; exit 2 and list every error if invalid "
                              "(warnings about files that appear later leave it valid)")
    validate.add_argument("file", help="the plan YAML file")
    validate.set_defaults(func=cmd_validate)
    show = sub.add_parser("hash", help="print the plan's sha256 (of its canonical JSON)")
    show.add_argument("file")
    show.set_defaults(func=cmd_hash)
    cost = sub.add_parser("cost", help="what a run of the plan costs the cluster: GPU-hours, duration, the share of "
                          "each pool asked at once")
    cost.add_argument("file")
    cost.add_argument("--json", action="store_true")
    cost.set_defaults(func=cmd_cost)
    schema = sub.add_parser("schema", help="print the plan's JSON Schema (for editors and documentation)")
    schema.set_defaults(func=cmd_schema)


def cmd_validate(args: argparse.Namespace) -> int:
    from gpupoc.plan.loader import load_plan, summary

    try:
        plan = load_plan(args.file)
    except ConfigError as exc:
        print(f"{exc.source}: invalid POC plan, {len(exc.errors)} error(s):", file=sys.stderr)
        for line in exc.errors:
            print(f"  {line}", file=sys.stderr)
        return 2
    print("\n".join(summary(plan)))
    if plan.warnings:
        sys.stdout.flush()  # the summary first, then the warnings, when both go to one terminal
        print(f"{args.file}: {len(plan.warnings)} warning(s):", file=sys.stderr)
        for line in plan.warnings:
            print(f"  {line}", file=sys.stderr)
    return 0


def cmd_hash(args: argparse.Namespace) -> int:
    from gpupoc.plan.loader import load_plan, plan_hash

    print(plan_hash(load_plan(args.file)))
    return 0


def cmd_cost(args: argparse.Namespace) -> int:
    import json

    from gpupoc.plan.cost import cost_lines, plan_cost
    from gpupoc.plan.loader import load_plan

    plan = load_plan(args.file, kubeconfig_later=True)
    print(json.dumps(plan_cost(plan).to_dict(), indent=2) if args.json else "\n".join(cost_lines(plan)))
    return 0


def cmd_schema(args: argparse.Namespace) -> int:
    import json

    from gpupoc.plan.document import Plan

    print(json.dumps(Plan.model_json_schema(), indent=2, sort_keys=True))
    return 0
