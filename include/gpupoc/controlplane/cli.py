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
    up.add_argument("--kueue", action="store_true", help="also start real Kueue beside it (built by "
                    "`bash scripts/control-plane/build.sh --with-kueue`); `down` stops it too")
    up.add_argument("--audit-webhook-url", help="also send audit events to this URL (webhook backend, batch mode)")
    up.add_argument("--dra", action="store_true", help="GPUs as DRA devices: the nodes publish ResourceSlices (whole "
                    "cards, MIG-like partitions, shared cards) instead of nvidia.com/gpu capacity (also when --plan says "
                    "platform.options.gpus: dra)")
    up.add_argument("--workload-api", action="store_true", help="turn on the GenericWorkload gate (Workload and "
                    "PodGroup in scheduling.k8s.io/v1beta1, kube-scheduler's gang scheduling)")
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
    _register_exporter(sub)


def _register_exporter(sub) -> None:
    ex = sub.add_parser("exporter", help="dcgm-exporter and kube-state-metrics series from the API server's objects",
                        description="Serve on 127.0.0.1 /metrics (dcgm-exporter) and /metrics/kube-state "
                        "(kube-state-metrics) computed from the nodes, pods and ResourceQuotas read through a "
                        "kubeconfig; point the monitoring stack at it with `gpupoc stack up --metrics-url URL`.")
    verbs = ex.add_subparsers(dest="exporter_command", required=True)
    ex_up = verbs.add_parser("up", help="start it in the background for the control plane under --dir")
    ex_down = verbs.add_parser("down", help="stop it by its pid")
    for s in (ex_up, ex_down):
        s.add_argument("--dir", type=Path, default=DEFAULT_DIR, help=f"the control plane's directory ({DEFAULT_DIR})")
    ex_up.add_argument("--kubeconfig", type=Path, help="default: the control plane's admin.kubeconfig")
    ex_up.add_argument("--port", type=int, default=0, help="0: a free port")
    ex_up.set_defaults(func=cmd_exporter_up)
    ex_down.set_defaults(func=cmd_exporter_down)


def cmd_up(args: argparse.Namespace) -> int:
    from gpupoc.controlplane.flags import Features
    from gpupoc.controlplane.plane import start_control_plane
    from gpupoc.plan.loader import load_plan

    plan = load_plan(args.plan) if args.plan else None
    dra = args.dra or bool(plan and plan.platform.options.dra)  # the plan's platform.options.gpus: dra
    workload_api = args.workload_api or bool(plan and plan.platform.workload_api_gangs)
    features = Features(dra=dra, workload_api=workload_api)
    cp = start_control_plane(args.dir, plan=plan, audit_webhook_url=args.audit_webhook_url, features=features)
    took = ", ".join(f"{k} {v:.1f} s" for k, v in cp.timings.items())
    print(f"control plane {cp.version} at {cp.server} ({took})")
    if args.kueue:
        from gpupoc.controlplane.kueue import start_kueue

        kueue = start_kueue(cp)
        took = ", ".join(f"{k} {v:.1f} s" for k, v in kueue.timings.items())
        print(f"kueue {kueue.version} pid {kueue.pid}, webhooks on 127.0.0.1:{kueue.ports.webhook} ({took})")
    print(f"kubeconfig: {cp.kubeconfig}")
    print(f"kubectl:    {cp.kubectl}")
    print(f"audit log:  {cp.audit_log}")
    print(f"stop it:    gpupoc controlplane down --dir {args.dir}")
    return 0


def cmd_down(args: argparse.Namespace) -> int:
    from gpupoc.controlplane.exporter_process import stop_exporter
    from gpupoc.controlplane.plane import stop_control_plane

    exporter = ["exporter"] if stop_exporter(args.dir) else []
    stopped = exporter + stop_control_plane(args.dir)
    print(f"stopped {', '.join(stopped)}" if stopped else f"nothing runs under {args.dir}")
    return 0


def cmd_status(args: argparse.Namespace) -> int:
    from gpupoc.controlplane.status import status_lines

    lines, running = status_lines(args.dir)
    print("\n".join(lines))
    return 0 if running else 1


def cmd_exporter_up(args: argparse.Namespace) -> int:
    from gpupoc.controlplane.exporter_process import spawn_exporter

    ex = spawn_exporter(args.dir, args.kubeconfig, args.port)
    print(f"exporter {ex.url} (pid {ex.pid}): {ex.url}/metrics (dcgm-exporter), {ex.url}/metrics/kube-state "
          "(kube-state-metrics)")
    print(f"log:       {ex.log}")
    print(f"scrape it: gpupoc stack up --metrics-url {ex.url}")
    print(f"stop it:   gpupoc controlplane exporter down --dir {args.dir}")
    return 0


def cmd_exporter_down(args: argparse.Namespace) -> int:
    from gpupoc.controlplane.exporter_process import stop_exporter

    print("stopped the exporter" if stop_exporter(args.dir) else f"no exporter runs under {args.dir}")
    return 0


def cmd_node_heartbeat(args: argparse.Namespace) -> int:
    from gpupoc.controlplane.node_heartbeat import control_plane_at, start_heartbeat, stop_heartbeat

    cp = control_plane_at(args.dir)
    change = (stop_heartbeat if args.stop else start_heartbeat)(cp.run_kubectl, args.node)
    print(change.line())
    return 0
