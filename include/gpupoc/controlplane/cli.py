"""``gpupoc controlplane up|down|status``: a real Kubernetes control plane with the plan's pools as KWOK GPU
nodes, under ``var/control-plane`` (docs/real-cluster.md)."""

from __future__ import annotations

import argparse
from pathlib import Path

DEFAULT_DIR = Path("var/control-plane")


def register(subparsers) -> None:
    """Add the ``controlplane`` area to the top-level ``gpupoc`` parser."""
    p = subparsers.add_parser("controlplane", help="start, stop or show the real control plane (KWOK GPU nodes)")
    sub = p.add_subparsers(dest="controlplane_command", required=True)
    up = sub.add_parser("up", help="start it (or resume it on the same directory)",
                        description="etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kwok as local "
                        "processes; the plan's pools as KWOK nodes; an administrator kubeconfig. Needs "
                        "`make control-plane`.")
    up.add_argument("--plan", help="the POC plan whose pools become nodes and whose audit policy the API server "
                    "gets (default plans/default.yaml)")
    up.add_argument("--audit-webhook-url", help="also send audit events to this URL (webhook backend, batch mode)")
    stop = sub.add_parser("node-stop", help="stop a KWOK node's heartbeat, as stopping its kubelet does",
                          description="The node lifecycle controller marks the node unreachable after "
                          "--node-monitor-grace-period; its pods are evicted as their tolerations say. The "
                          "`command` node-failure injector's fail command on this control plane.")
    start = sub.add_parser("node-start", help="start a KWOK node's heartbeat again (after node-stop)")
    for s in (stop, start):
        s.add_argument("node", help="the KWOK node's name")
    for s in (up, sub.add_parser("down", help="stop every process it runs"),
              sub.add_parser("status", help="show each component's process and the API server"), stop, start):
        s.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=f"its directory (default {DEFAULT_DIR})")
    up.set_defaults(func=cmd_up)
    sub.choices["down"].set_defaults(func=cmd_down)
    sub.choices["status"].set_defaults(func=cmd_status)
    stop.set_defaults(func=cmd_node_heartbeat, stop=True)
    start.set_defaults(func=cmd_node_heartbeat, stop=False)


def cmd_up(args: argparse.Namespace) -> int:
    from gpupoc.controlplane.plane import start_control_plane
    from gpupoc.plan.loader import load_plan

    plan = load_plan(args.plan) if args.plan else None
    cp = start_control_plane(args.dir, plan=plan, audit_webhook_url=args.audit_webhook_url)
    took = ", ".join(f"{k} {v:.1f} s" for k, v in cp.timings.items())
    print(f"control plane {cp.version} at {cp.server} ({took})")
    print(f"kubeconfig: {cp.kubeconfig}")
    print(f"kubectl:    {cp.kubectl}")
    print(f"audit log:  {cp.audit_log}")
    print(f"stop it:    gpupoc controlplane down --dir {args.dir}")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    from gpupoc.controlplane.plane import stop_control_plane

    stopped = stop_control_plane(args.dir)
    print(f"stopped {', '.join(stopped)}" if stopped else f"nothing runs under {args.dir}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from gpupoc.controlplane.status import status_lines

    lines, running = status_lines(args.dir)
    print("\n".join(lines))
    return 0 if running else 1


def cmd_node_heartbeat(args: argparse.Namespace) -> int:
    from gpupoc.controlplane.node_heartbeat import control_plane_at, start_heartbeat, stop_heartbeat

    cp = control_plane_at(args.dir)
    change = (stop_heartbeat if args.stop else start_heartbeat)(cp.run_kubectl, args.node)
    print(change.line())
    return 0
