"""``gpupoc sim``: serve the simulated cluster, inject node failures, validate a cluster config."""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import urllib.error
import urllib.request
from pathlib import Path

from gpupoc.common.constants import SIM_DATA_DIR
from gpupoc.exceptions import ApiError, SourceUnavailable


def register(subparsers: argparse._SubParsersAction) -> None:
    sim = subparsers.add_parser("sim", help="the simulated GPU cluster (Kubernetes API)")
    sub = sim.add_subparsers(dest="sim_command", required=True)

    serve = sub.add_parser("serve", help="serve the cluster on 127.0.0.1 until SIGTERM")
    serve.add_argument("--config", type=Path, default=None, help="cluster config YAML (default: the shipped one)")
    serve.add_argument("--mode", default="", help="scheduler: kube, kueue, volcano, kai or hami (overrides the config's "
                       "`scheduler:`; without --config, the shipped clusters/<mode>.yaml)")
    serve.add_argument("--empty", action="store_true", help="start with the config's nodes only: no tenants, "
                       "priority classes or queues (apply them through the API: gpupoc cluster manifests)")
    serve.add_argument("--port", type=int, default=0, help="TCP port (0: a free port)")
    serve.add_argument("--kubeconfig", type=Path, default=None,
                       help="where to write it (default <data-dir>/kubeconfig)")
    serve.add_argument("--faults", default="", help="fault profiles, comma-separated (default: none)")
    serve.add_argument("--behaviour", default="", help="behaviour profiles of a correct platform, comma-separated "
                       "(release-staggered, kueue-requeue, ...; default: none)")
    serve.add_argument("--behaviour-seed", type=int, default=0,
                       help="seed of the seeded behaviours (release order, throttling, latency; default 0)")
    serve.add_argument("--data-dir", type=Path, default=SIM_DATA_DIR, help="state directory (default var/sim)")
    serve.add_argument("--audit-webhook-config-file", type=Path, default=None,
                       help="also post audit events to this webhook (kubeconfig format, as kube-apiserver's flag)")
    serve.add_argument("--audit-webhook-batch-max-size", type=int, default=400,
                       help="events per batch at most (default 400)")
    serve.add_argument("--audit-webhook-batch-max-wait", default="30s",
                       help="send a batch at the latest this long after its first event (default 30s)")
    serve.add_argument("--audit-webhook-initial-backoff", default="10s",
                       help="wait before retrying a failed post, growing 1.5x (default 10s)")
    serve.add_argument("--log-level", default="INFO")
    serve.set_defaults(func=cmd_serve)

    node = sub.add_parser("node", help="inject node failures like an operator would see them")
    node_sub = node.add_subparsers(dest="node_command", required=True)
    for action, text in (("fail", "pull NODE's plug: unreachable now, its GPUs fall off the bus"),
                         ("recover", "bring NODE back"),
                         ("stop-kubelet", "stop NODE's kubelet: unreachable after the node monitor grace period"),
                         ("start-kubelet", "start NODE's kubelet again")):
        p = node_sub.add_parser(action, help=text)
        p.add_argument("node")
        p.add_argument("--kubeconfig", type=Path, default=SIM_DATA_DIR / "kubeconfig")
        p.set_defaults(func=cmd_node, action=action)

    config = sub.add_parser("config", help="cluster config files")
    config_sub = config.add_subparsers(dest="config_command", required=True)
    validate = config_sub.add_parser("validate", help="check a cluster config; lists every error with its path")
    validate.add_argument("file", type=Path)
    validate.set_defaults(func=cmd_validate)


def cmd_serve(args: argparse.Namespace) -> int:
    from gpupoc.sim.behaviours import parse_behaviours
    from gpupoc.sim.config import emptied, load_cluster_config, shipped_config, with_scheduler
    from gpupoc.sim.faults import parse_faults
    from gpupoc.kube.schedulers import parse_mode
    from gpupoc.sim.server import serve

    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    mode = parse_mode(args.mode)
    config = load_cluster_config(args.config if args.config or mode is None else shipped_config(mode))
    if mode is not None and config.scheduler != mode:
        config = with_scheduler(config, mode)
    if args.empty:
        config = emptied(config)
    faults = parse_faults(args.faults)
    behaviours = parse_behaviours(args.behaviour)
    webhook = _audit_webhook(args)
    asyncio.run(serve(config, args.data_dir, args.port, args.kubeconfig, faults, behaviours, args.behaviour_seed,
                      audit_webhook=webhook))
    return 0


def _audit_webhook(args: argparse.Namespace):
    """The webhook audit backend's config from the ``--audit-webhook-*`` flags (None without a config file)."""
    from gpupoc.exceptions import ConfigError
    from gpupoc.sim.audit_webhook import load_webhook_config

    if args.audit_webhook_config_file is None:
        return None
    batch = {}
    for flag, field in (("batch_max_wait", "max_wait_s"), ("initial_backoff", "initial_backoff_s")):
        value = getattr(args, f"audit_webhook_{flag}")
        seconds = parse_duration(value)
        if seconds is None:
            raise ConfigError(f"--audit-webhook-{flag.replace('_', '-')}", [f"expected a duration such as 1s, "
                                                                             f"500ms or 2m, got {value!r}"])
        batch[field] = seconds
    if args.audit_webhook_batch_max_size < 1:
        raise ConfigError("--audit-webhook-batch-max-size", [f"expected a positive number of events, got "
                                                            f"{args.audit_webhook_batch_max_size}"])
    return load_webhook_config(args.audit_webhook_config_file, max_size=args.audit_webhook_batch_max_size, **batch)


def parse_duration(value: str) -> float | None:
    """A Go-style duration (``1s``, ``500ms``, ``2m``, ``1h``; a bare number is seconds) in seconds."""
    import re

    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*", str(value))
    if m is None:
        return None
    return float(m.group(1)) * {"ms": 0.001, "s": 1, "m": 60, "h": 3600, None: 1}[m.group(2)]


def cmd_node(args: argparse.Namespace) -> int:
    import ssl

    from gpupoc.sim.kubeconfig import read_context_full

    kc = read_context_full(args.kubeconfig, "admin")
    url, token = kc["server"], kc["token"]
    tls = ssl.create_default_context(cadata=kc["ca_pem"].decode()) if kc["ca_pem"] else None
    endpoint = f"{url}/apis/sim.gpupoc.io/v1/nodes/{args.node}/{args.action}"
    req = urllib.request.Request(endpoint, data=b"{}", method="POST",
                                 headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(req, timeout=30, context=tls) as resp:
            node = json.loads(resp.read())
    except urllib.error.HTTPError as exc:
        body = exc.read().decode(errors="replace")
        try:
            parsed: dict | str = json.loads(body)
        except ValueError:
            parsed = body
        raise ApiError(exc.code, parsed, endpoint) from None
    except urllib.error.URLError as exc:
        raise SourceUnavailable(url, f"cannot reach the simulated cluster: {exc.reason}",
                                "start it with `gpupoc sim serve` or pass the right --kubeconfig") from None
    ready = next((c for c in (node.get("status") or {}).get("conditions") or [] if c.get("type") == "Ready"), {})
    done = {"fail": "failed", "recover": "recovered", "stop-kubelet": "kubelet stopped",
            "start-kubelet": "kubelet started"}[args.action]
    print(f"node/{args.node} {done} (Ready={ready.get('status', '?')})")
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from gpupoc.sim.config import load_cluster_config

    cfg = load_cluster_config(args.file)
    gpus = sum(p.nodes * p.gpus_per_node for p in cfg.pools)
    print(f"{args.file}: ok ({len(cfg.pools)} pools, {sum(p.nodes for p in cfg.pools)} nodes, {gpus} GPUs, "
          f"{len(cfg.tenants)} tenants), scheduler {cfg.scheduler.value}")
    return 0
