"""The harness's API budget on the real API server (kube-apiserver v1.37 of ``make control-plane``, KWOK nodes).

A fresh control plane with ``ceil(N / 100)`` KWOK nodes of 100 GPUs. Per wave, in a namespace of its own: N pods
of the default plan's ``v-train-1g`` (``gpupoc.podspec.build_pod``: the POC's labels, run-id selector and the
wave gate), created gated by the submitter, then the observer starts ``observe_wave`` over the wave's selector,
the submitter removes every gate, KWOK runs each pod 15 s and ends it, and the observer returns once every item
has its outcome. The observer runs either with the watch cache (``watch``: today's code, one list then watches)
or listing on every look (``list``: a plain caller, the observer before the watch cache), one look every
``--interval`` seconds (default 3 s up to 1,000 pods, 15 s above, as plans/default.yaml and plans/scale.yaml).

Each component has its own client and User-Agent (``ClientFactory.caller(context, component)``): the
submitter runs as the administrator (APF's ``exempt`` level), the observer as the runner's service account
with a FlowSchema of its own (``gpupoc-observer`` -> ``workload-low``, where service accounts land). Read
before and after the observer's life: kube-apiserver's ``/metrics`` (``apiserver_request_total`` by verb,
resource and code; ``apiserver_response_sizes`` by verb and resource; APF execution seconds and estimated seats
by flow schema) and its audit log (the plan's audit policy logs every request of the runner's service account,
so every request of the observer, with its User-Agent). Bytes read are counted by the observer's client.

    PYTHONPATH=include .venv/bin/python bench/api_load.py                      # 1,000 pods, 3 runs, both modes
    PYTHONPATH=include .venv/bin/python bench/api_load.py --sizes 10000 --runs 1
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import yaml

from gpupoc.common import api_budget as B
from gpupoc.common.timefmt import rfc3339, utcnow
from gpupoc.pipeline.k8s import ClientFactory, Response
from gpupoc.pipeline.observe import observe_wave
from gpupoc.pipeline.watch_cache import WatchingCaller, watching

PODS_PER_NODE = 100
THREADS = 16


def say(what: str) -> None:
    print(f"{time.strftime('%H:%M:%S')} {what}", file=sys.stderr, flush=True)


class Counting:
    """A caller that counts its requests and the bytes of their answers (no ``stream``: lists every look)."""

    def __init__(self, caller):
        self.caller, self.context, self.requests, self.bytes = caller, caller.context, 0, 0
        self.lists: dict[str, int] = {}

    @property
    def endpoint(self) -> str:
        return self.caller.endpoint

    def call(self, method: str, path: str, **kw) -> Response:
        r = self.caller.call(method, path, **kw)
        self.requests += 1
        self.bytes += len(r.text or "")
        if method == "GET":
            self.lists[path] = self.lists.get(path, 0) + 1
        return r


class CountingStreamer(Counting):
    """``Counting`` that also opens watches (the watch cache's caller); a watch's bytes are in its stats."""

    def stream(self, path, query, read_timeout_s, handle):
        self.requests += 1
        return self.caller.stream(path, query, read_timeout_s, handle)


def setup(cp, plan, kubeconfig_out: Path) -> None:
    """The observer's identity (the runner's service account, read-only everywhere), its FlowSchema, and the
    plan's priority classes; ``kubeconfig_out``: a kubeconfig with context ``observer`` holding its token."""
    ns, sa = plan.platform.namespace, plan.cluster.runner_service_account
    docs = [
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}},
        {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": sa, "namespace": ns}},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "gpupoc-observer"},
         "rules": [{"apiGroups": ["*"], "resources": ["*"], "verbs": ["get", "list", "watch"]}]},
        {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRoleBinding",
         "metadata": {"name": "gpupoc-observer"},
         "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": "gpupoc-observer"},
         "subjects": [{"kind": "ServiceAccount", "name": sa, "namespace": ns}]},
        {"apiVersion": "flowcontrol.apiserver.k8s.io/v1", "kind": "FlowSchema", "metadata": {"name": "gpupoc-observer"},
         "spec": {"priorityLevelConfiguration": {"name": "workload-low"}, "matchingPrecedence": 1000,
                  "distinguisherMethod": {"type": "ByUser"},
                  "rules": [{"subjects": [{"kind": "ServiceAccount", "serviceAccount": {
                      "name": sa, "namespace": ns}}],
                      "resourceRules": [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"],
                                         "namespaces": ["*"], "clusterScope": True}],
                      "nonResourceRules": [{"verbs": ["*"], "nonResourceURLs": ["*"]}]}]}},
        *({"apiVersion": "scheduling.k8s.io/v1", "kind": "PriorityClass", "metadata": {"name": n}, "value": v}
          for n, v in (("gpupoc-high", 1000), ("gpupoc-normal", 100), ("gpupoc-low", 10))),
    ]
    cp.run_kubectl("apply", "-f", "-", input=yaml.safe_dump_all(docs))
    token = cp.run_kubectl("create", "token", sa, "-n", ns, "--duration=4h").stdout.strip()
    admin = yaml.safe_load(cp.kubeconfig.read_text())
    cluster = admin["clusters"][0]
    kubeconfig_out.write_text(yaml.safe_dump({
        "apiVersion": "v1", "kind": "Config", "current-context": "observer", "clusters": [cluster],
        "users": [{"name": "observer", "user": {"token": token}}],
        "contexts": [{"name": "observer", "context": {"cluster": cluster["name"], "user": "observer"}}]}))
    kubeconfig_out.chmod(0o600)


def wave_pods(n: int, ns: str, run_id: str) -> list[dict]:
    """N gated pods of the default plan's v-train-1g in ``ns``, as the POC builds them."""
    from kubernetes.client import ApiClient

    from gpupoc.plan import DEFAULT_PLAN, load_plan
    from gpupoc.podspec.build import build_pod

    plan = load_plan(DEFAULT_PLAN)
    tenant, workload = plan.tenants[0], plan.workload("v-train-1g")
    ser = ApiClient().sanitize_for_serialization
    out = []
    for i in range(n):
        pod = ser(build_pod(workload, tenant, plan, run_id=run_id, test_class="queue_congestion", wave_gate=True,
                            name=f"item-{i:05d}"))
        pod["metadata"]["namespace"] = ns
        pod["spec"].pop("serviceAccountName", None)
        out.append(pod)
    return out


def submit(caller, pods: list[dict], release: bool) -> list[int]:
    """Create the pods (or, ``release``, remove their gates) from THREADS threads; the statuses answered."""
    def one(p: dict) -> int:
        m = p["metadata"]
        if release:
            return caller.call("PATCH", f"/api/v1/namespaces/{m['namespace']}/pods/{m['name']}",
                               body=[{"op": "remove", "path": "/spec/schedulingGates"}],
                               content_type="application/json-patch+json").status
        return caller.call("POST", f"/api/v1/namespaces/{m['namespace']}/pods", body=p).status

    with ThreadPoolExecutor(max_workers=THREADS) as pool:
        return list(pool.map(one, pods))


def metrics(admin) -> dict:
    r = admin.call("GET", "/metrics", timeout=60)
    if not r.ok:
        raise SystemExit(f"GET /metrics answered HTTP {r.status}: {r.message[:200]}; the bench reads it as the "
                         "administrator (system:masters)")
    return B.parse_metrics(r.text)


def run_wave(cp, factory: ClientFactory, observers: ClientFactory, n: int, mode: str, run: int,
             interval: float) -> dict:
    """One wave observed in ``mode`` (see the module); ``factory``: the administrator's clients, ``observers``:
    the observer's; its figures."""
    ns = f"w{n}-{mode}-{run}"
    run_id = f"api-load-{n}-{mode}-{run}"
    admin = factory.caller(cp_context(cp), "bench")
    submitter = factory.caller(cp_context(cp), "submitter")
    say(f"wave {ns}: creating {n} gated pods")
    cp.run_kubectl("create", "namespace", ns)
    pods = wave_pods(n, ns, run_id)
    t0 = time.monotonic()
    created = submit(submitter, pods, release=False)
    create_s = time.monotonic() - t0
    raw = observers.caller("observer", "observer")
    counted = CountingStreamer(raw) if mode == "watch" else Counting(raw)
    caller = watching(counted) if mode == "watch" else counted
    items = {p["metadata"]["annotations"]["gpupoc.io/item"]: ns for p in pods}
    before, since = metrics(admin), rfc3339(utcnow())
    result: dict = {}

    def observe() -> None:
        result["observed"] = observe_wave(caller, [ns], f"gpupoc.io/run-id={run_id}", items, interval_s=interval,
                                          timeout_s=1800)

    t1 = time.monotonic()
    observer = threading.Thread(target=observe, name="observer")
    observer.start()
    time.sleep(min(interval, 3))  # the observer's first look sees the gated wave, as in the POC
    say(f"wave {ns}: created in {create_s:.1f} s; releasing")
    released = submit(submitter, pods, release=True)
    say(f"wave {ns}: released; the observer waits for every outcome")
    observer.join()
    wave_s = time.monotonic() - t1
    say(f"wave {ns}: observed in {wave_s:.1f} s; closing the observer")
    if isinstance(caller, WatchingCaller):
        caller.close()  # every watch's bytes are in its stats once it ended
    stats = caller.stats() if isinstance(caller, WatchingCaller) else []
    time.sleep(1)  # the audit log's last lines
    after, until = metrics(admin), rfc3339(utcnow())
    obs = result.get("observed")
    return figures(n, mode, run, B.delta(before, after), B.audit_requests(cp.audit_log, since, until), counted,
                   stats, {"create_s": round(create_s, 1), "wave_s": round(wave_s, 1),
                           "created_ok": sum(1 for s in created if s in (200, 201)),
                           "released_ok": sum(1 for s in released if s == 200),
                           "open_at_end": len(obs.open) if obs else None})


def delete_namespace(cp, ns: str) -> None:
    """Delete a finished wave's namespace and wait for it to go (the next wave on a quiet server)."""
    say(f"wave {ns}: deleting its namespace")
    cp.run_kubectl("delete", "namespace", ns, "--timeout=900s", timeout=960)


def cp_context(cp) -> str:
    return yaml.safe_load(cp.kubeconfig.read_text())["current-context"]


def figures(n: int, mode: str, run: int, d: dict, audit: B.AuditCount, counted: Counting, stats: list[dict],
            wave: dict) -> dict:
    """One wave's budget: the observer's requests, bytes, LISTs, 429s and share of seat-seconds."""
    lists = {r: c for (comp, verb, r), c in audit.requests.items() if comp == "observer" and verb == "list"}
    relists = sum(s.get("relists_after_gone", 0) for s in stats)
    gone = sum(1 for s in stats for x in s.get("refusals", []) if x.startswith("HTTP 410"))
    full_after_first = max(0, sum(max(0, c - 1) for c in lists.values()) - relists)
    bytes_read = counted.bytes + sum(s.get("bytes_watched", 0) for s in stats)
    seats = B.seat_seconds(d)
    total = sum(seats.values())
    share = seats.get("gpupoc-observer", 0.0) / total if total else None
    observer_requests = audit.of("observer")
    codes = B.by(d, "apiserver_request_total", "code")
    out = {"pods": n, "mode": mode, "run": run, **wave,
           "observer_requests_audit": observer_requests, "observer_requests_client": counted.requests,
           "requests_per_pod": round(observer_requests / n, 3), "bytes_read": bytes_read,
           "kb_per_pod": round(bytes_read / n / 1000, 2), "observer_lists_by_resource": lists,
           "observer_watches": audit.of("observer", "watch"), "full_lists_after_first": full_after_first,
           "relists_after_410": relists, "gone_410": gone, "observer_429": audit.codes.get(("observer", 429), 0),
           "server_429": int(codes.get(("429",), 0)),
           "list_response_bytes_server": {f"{r}": int(v) for (verb, r), v in B.by(
               d, "apiserver_response_sizes_sum", "verb", "resource").items() if verb == "LIST" and v},
           "seat_seconds": {k: round(v, 3) for k, v in sorted(seats.items())},
           "observer_seat_share_pct": None if share is None else round(100 * share, 3),
           "audit_requests_by_component": dict(sorted(
               {c: audit.of(c) for c, _, _ in audit.requests}.items()))}
    out["targets"] = [t.line() for t in B.judge(
        pods=n, requests=observer_requests, bytes_read=bytes_read, full_lists_after_first=full_after_first,
        relists_after_gone=relists, gone_answers=gone, harness_seat_share=share,
        seat_why="no seat-seconds in the API server's APF metrics")]
    return out


def _median(values: list) -> float | None:
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def summary(rows: list[dict]) -> None:
    """The median per (size, mode) of the runs, and its targets."""
    keys = ("requests_per_pod", "kb_per_pod", "full_lists_after_first", "relists_after_410", "observer_429",
            "observer_seat_share_pct", "wave_s")
    for n in sorted({r["pods"] for r in rows}):
        for mode in ("watch", "list"):
            rs = [r for r in rows if r["pods"] == n and r["mode"] == mode]
            if not rs:
                continue
            med = {k: _median([r[k] for r in rs]) for k in keys}
            print(f"median of {len(rs)} ({n} pods, observer {mode}): " + ", ".join(f"{k} {v}" for k, v in med.items()))
            share = med["observer_seat_share_pct"]
            for t in B.judge(pods=n, requests=round(med["requests_per_pod"] * n), bytes_read=round(
                    med["kb_per_pod"] * 1000 * n), full_lists_after_first=med["full_lists_after_first"],
                    relists_after_gone=med["relists_after_410"], gone_answers=sum(r["gone_410"] for r in rs),
                    harness_seat_share=None if share is None else share / 100,
                    seat_why="no seat-seconds in the API server's APF metrics"):
                print("   " + t.line())


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--sizes", type=int, nargs="+", default=[1000])
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--modes", nargs="+", choices=("watch", "list"), default=["watch", "list"])
    ap.add_argument("--interval", type=float, help="seconds between looks (default 3 up to 1,000 pods, else 15)")
    ap.add_argument("--dir", type=Path, help="the control plane's directory (default: a temporary one)")
    ap.add_argument("--out", type=Path, help="also write every wave's figures here (JSON lines)")
    a = ap.parse_args(argv)
    if any(n <= 0 for n in a.sizes):
        ap.error(f"--sizes {a.sizes}: each size must be a positive number of pods")
    from gpupoc.controlplane import start_control_plane
    from gpupoc.plan import DEFAULT_PLAN, load_plan
    from gpupoc.plan.model import Pool

    plan = load_plan(DEFAULT_PLAN)
    nodes = math.ceil(max(a.sizes) / PODS_PER_NODE)
    pool = Pool.model_validate({**plan.pool("training").model_dump(), "nodes": nodes,
                                "gpus_per_node": PODS_PER_NODE, "node_names": []})
    root = a.dir or Path(tempfile.mkdtemp(prefix="api-load-"))
    cp = start_control_plane(root, pools=[pool], plan=plan, process_runner=False)
    rows: list[dict] = []
    try:
        print(f"kube-apiserver {cp.version}: {nodes} KWOK nodes x {PODS_PER_NODE} GPUs; audit log {cp.audit_log}",
              flush=True)
        observer_kc = root / "observer.kubeconfig"
        setup(cp, plan, observer_kc)
        factory = ClientFactory(str(cp.kubeconfig), timeout=120)
        observers = ClientFactory(str(observer_kc), timeout=120)
        for n in a.sizes:
            interval = a.interval or (3.0 if n <= 1000 else 15.0)
            for run in range(a.runs):
                for mode in a.modes:
                    if rows:  # the next wave on a quiet server; the last one goes with the control plane
                        delete_namespace(cp, f"w{rows[-1]['pods']}-{rows[-1]['mode']}-{rows[-1]['run']}")
                    row = run_wave(cp, factory, observers, n, mode, run, interval)
                    print(json.dumps(row), flush=True)
                    rows.append(row)
                    if a.out:
                        with a.out.open("a") as f:
                            f.write(json.dumps(row) + "\n")
    finally:
        cp.stop()
    summary(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
