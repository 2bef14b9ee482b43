"""``gpupoc audit webhook up|down|status`` (the audit webhook receiver), ``gpupoc audit events`` (the plan's
audit source for a window) and ``gpupoc audit check`` (is the plan's audit source fresh)."""

from __future__ import annotations

import argparse
import json
import sys
from datetime import timedelta
from pathlib import Path

from gpupoc.monitoring import audit_intake as intake
from gpupoc.monitoring.intake_auth import add_auth_args


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("audit", help="audit intake: the webhook receiver, the plan's audit source",
                              description=__doc__)
    sub = p.add_subparsers(dest="audit_cmd", required=True)
    hook = sub.add_parser("webhook", help="the audit webhook receiver for --audit-webhook-config-file")
    hook_sub = hook.add_subparsers(dest="webhook_cmd", required=True)
    u = hook_sub.add_parser("up", help="start the receiver and write the API server's webhook config")
    u.add_argument("--data-dir", type=Path, default=intake.DEFAULT_DATA_DIR, help="record, config, log (var/audit)")
    u.add_argument("--host", default="127.0.0.1", help="listen address (beyond loopback only with the token and "
                   "TLS, both on by default)")
    u.add_argument("--port", type=int, default=0, help="0: a free port")
    u.add_argument("--advertise-url", help="the URL the API server posts to (default: the listen address; its host "
                   "goes into the generated certificate)")
    add_auth_args(u)
    u.set_defaults(func=_up)
    for name, func, text in (("down", _down, "stop the receiver `up` started"),
                             ("status", _status, "is the receiver running; exit 1 when not")):
        sp = hook_sub.add_parser(name, help=text)
        sp.add_argument("--data-dir", type=Path, default=intake.DEFAULT_DATA_DIR)
        sp.set_defaults(func=func)
    ev = sub.add_parser("events", help="print the plan's audit events of the last minutes as JSON lines")
    ev.add_argument("--plan", required=True, type=Path)
    ev.add_argument("--minutes", type=float, default=15.0)
    ev.set_defaults(func=_events)
    ck = sub.add_parser("check", help="send a probe request and wait for it in the plan's audit source")
    ck.add_argument("--plan", required=True, type=Path)
    ck.add_argument("--max-delay", type=float, default=None,
                    help="seconds (default: test_classes.audit_trail.thresholds.max_audit_delay_seconds)")
    ck.set_defaults(func=_check)


def _up(args: argparse.Namespace) -> int:
    from gpupoc.exceptions import ConfigError

    if bool(args.tls_cert) != bool(args.tls_key):
        raise ConfigError("--tls-cert/--tls-key", ["give both the certificate and its private key, or neither"])
    tls = (args.tls_cert, args.tls_key) if args.tls_cert else None
    st = intake.up(args.data_dir, args.host, args.port, args.token_file, args.advertise_url, tls, args.ca_file,
                   no_token=args.no_token, no_tls=args.no_tls, tls_sans=tuple(args.tls_san))
    print(f"audit webhook {st['url']}  (pid {st['pid']}) -> {st['record']}")
    print(f"API server    --audit-webhook-config-file={st['config']}  (posts to {st['advertise_url']})")
    print(f"sender auth   token file {st.get('token_file') or 'none (--no-token)'}, CA "
          f"{st.get('ca_file') or 'none (--no-tls)'}")
    return 0


def _down(args: argparse.Namespace) -> int:
    stopped = intake.down(args.data_dir)
    print("stopped: " + (", ".join(stopped) if stopped else "nothing was running"))
    return 0


def _status(args: argparse.Namespace) -> int:
    st = intake.status(args.data_dir)
    if "pid" not in st:
        print(f"not running: {st['reason']}")
        return 1
    print(f"audit webhook {'ready' if st['ready'] else 'down'}  {st['url']}  pid {st['pid']} -> {st['record']}")
    return 0 if st["ready"] else 1


def _source(plan_path: Path):
    from gpupoc.exceptions import GpupocError
    from gpupoc.monitoring.audit_source import plan_audit_source
    from gpupoc.plan import load_plan

    plan = load_plan(plan_path)
    source = plan_audit_source(plan)
    if source is None:
        raise GpupocError(f"{plan_path}: evidence_sources names no audit source; set evidence_sources.audit "
                          "(file, webhook or command) or evidence_sources.audit_log_path")
    return plan, source


def _events(args: argparse.Namespace) -> int:
    from gpupoc.common.timefmt import utcnow

    _, source = _source(args.plan)
    end = utcnow()
    for ev in source.events(end - timedelta(minutes=args.minutes), end):
        sys.stdout.write(json.dumps(ev, separators=(",", ":")) + "\n")
    return 0


def _check(args: argparse.Namespace) -> int:
    from gpupoc.monitoring.audit_source import audit_fresh
    from gpupoc.pipeline.k8s import IN_CLUSTER, ClientFactory

    plan, source = _source(args.plan)
    limit = args.max_delay or plan.test_classes.audit_trail.thresholds.max_audit_delay_seconds
    factory = ClientFactory(str(plan.kubeconfig_path) if plan.kubeconfig_path else None)
    try:
        context = IN_CLUSTER if plan.platform.in_cluster else (plan.platform.admin_context or "admin")
        res = audit_fresh(source, factory(context), plan.platform.namespace, limit)
    finally:
        factory.close()
    if res.fresh:
        print(f"✓ audit source fresh: probe {res.probe} seen after {res.delay_s:.1f}s (limit {limit:g}s) in "
              f"{res.source}")
        return 0
    print(f"✗ audit source stale: {res.reason} ({res.source})")
    return 1
