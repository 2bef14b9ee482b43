"""``gpupoc stack up|down|status``: the local Prometheus + Alertmanager + alert receiver stack."""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from gpupoc.monitoring import stack
from gpupoc.monitoring.config import parse_rule_for


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("stack", help="local monitoring stack (Prometheus, Alertmanager, alert receiver)",
                              description=__doc__)
    sub = p.add_subparsers(dest="stack_cmd", required=True)

    def common(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--data-dir", type=Path, default=Path("var/monitoring"),
                        help="where configs, TSDB, logs, stack.json and the alert record live (var/monitoring)")

    u = sub.add_parser("up", help="start Prometheus, Alertmanager and the receiver (no-op when running)")
    common(u)
    u.add_argument("--sim-url", help="simulated cluster URL (default: url in --sim-json)")
    u.add_argument("--sim-json", type=Path, default=Path("var/sim/sim.json"))
    u.add_argument("--metrics-url", help="scrape dcgm-exporter (/metrics) and kube-state-metrics (/metrics/kube-state) "
                   "here instead of the simulated cluster: gpupoc's exporter on a real cluster (`gpupoc controlplane "
                   "exporter up` prints its URL)")
    u.add_argument("--scrape-interval", default="5s")
    u.add_argument("--evaluation-interval", default="5s")
    u.add_argument("--prometheus-port", type=int, default=0, help="0: a free port")
    u.add_argument("--alertmanager-port", type=int, default=0)
    u.add_argument("--receiver-port", type=int, default=0)
    u.add_argument("--rule-for", action="append", metavar="ALERT=DURATION",
                   help="override an alert rule's `for`, e.g. GpuAllocatedButIdle=1m (repeatable)")
    u.add_argument("--config-dir", type=Path, help="templates directory (default: the project's monitoring/)")
    u.set_defaults(func=_up)

    d = sub.add_parser("down", help="stop what `stack up` started, by pid")
    common(d)
    d.set_defaults(func=_down)

    s = sub.add_parser("status", help="health of each component and scrape target; exit 1 when unhealthy")
    common(s)
    s.add_argument("--json", action="store_true", help="print the status as JSON")
    s.set_defaults(func=_status)


def _up(args: argparse.Namespace) -> int:
    opts = stack.StackOptions(
        data_dir=args.data_dir, sim_url=args.sim_url, sim_json=args.sim_json, metrics_url=args.metrics_url,
        scrape_interval=args.scrape_interval,
        evaluation_interval=args.evaluation_interval, prometheus_port=args.prometheus_port,
        alertmanager_port=args.alertmanager_port, receiver_port=args.receiver_port,
        rule_for=parse_rule_for(args.rule_for), config_dir=args.config_dir)
    state = stack.up(opts)
    print(f"prometheus   {state['prometheus']['url']}  (pid {state['prometheus']['pid']})")
    print(f"alertmanager {state['alertmanager']['url']}  (pid {state['alertmanager']['pid']})")
    print(f"receiver     {state['receiver']['url']}  (pid {state['receiver']['pid']}) -> "
          f"{state['receiver'].get('record')}")
    print(f"sender auth  token file {state['receiver'].get('token_file') or 'none'}, CA "
          f"{state['receiver'].get('ca_file') or 'none'} (in Alertmanager's http_config)")
    url = state.get("metrics_url") or state["sim_url"]
    print(f"scraping     {url} ({state.get('metrics_source', 'simulated cluster')}) every {state['scrape_interval']}")
    return 0


def _down(args: argparse.Namespace) -> int:
    stopped = stack.down(args.data_dir)
    print("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))
    return 0


def _status(args: argparse.Namespace) -> int:
    st = stack.status(args.data_dir)
    if args.json:
        print(json.dumps(st, indent=2))
        return 0 if st.get("healthy") else 1
    if "components" not in st:
        print(f"not running: {st['reason']}")
        return 1
    for name, c in st["components"].items():
        state = "ready" if c["ready"] else ("alive, not ready" if c["alive"] else "down")
        print(f"{name:<13}{state:<18}{c['url']}  pid {c['pid']}")
    for t in st["targets"]:
        err = f"  ({t['last_error']})" if t["last_error"] else ""
        print(f"target       {t['health']:<18}{t['job']}: {t['url']}{err}")
    print(f"alert record {st.get('record')}")
    return 0 if st["healthy"] else 1
