"""The simulated cluster's HTTP path: pods created, watched and deleted through the API with real clients.

``gpupoc sim serve`` runs as a subprocess on a generated cluster of 1,000 nodes x 8 GPUs (one tenant with
quota for every pod). Each client mode, against the same server, in turn:

- ``threads``: the ``kubernetes`` client, ``--concurrency`` threads sharing one ApiClient;
- ``asyncio``: ``kubernetes_asyncio``, ``--concurrency`` tasks sharing one ApiClient.

A mode runs two passes: ``max`` creates as fast as its clients can, ``paced`` at ``--rate`` pods/s (the
target rate). A pass opens a watch on the tenant's pods with the mode's client (typed models) in a process of
its own, as the POC's observers and triggerers watch from other processes than those that create pods;
creates ``--pods`` one-GPU pods as the tenant (RBAC, admission, quota and the audit log on the path); waits
until the watch has shown every pod ``PodScheduled=True``; deletes them all and waits for their DELETED events.

Printed per pass: pods/s created (first request sent to last answer), pods/s scheduled (first create sent to
the last ``PodScheduled=True`` the watch delivered) with the per-pod create-to-scheduled time, pods/s deleted,
the watch event latency p50/p99 (the server's audit ``stageTimestamp`` of each pod's create against the moment
the watching client had the pod's ADDED event; same host, same clock) and, beside it, the server's delivery
(the same, as read by a second watcher that only splits JSON lines: no client library's parsing), and the
server's CPU milliseconds per request (utime + stime of the server process from ``/proc/<pid>/stat`` over the
pass, controllers included).
``--runs N`` repeats everything on a fresh server and prints the median of each figure; ``--profile FILE``
runs the first server under cProfile.

    python bench/sim_http.py [--runs 3] [--pods 2000] [--concurrency 16] [--rate 200] [--modes threads asyncio]

Targets (issue 14): >= 200 pods/s created over HTTP, watch p99 <= 1 s. References: KWOK 20 pods/s;
clusterloader2 gates a real control plane at 400 pods/s with 500 QPS.
"""
from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

import yaml

TENANT = "bench"
TARGET_CREATED = 200.0
TARGET_WATCH_P99 = 1.0
KWOK = 20.0
CLK_TCK = os.sysconf("SC_CLK_TCK")


def cluster_config(path: Path, nodes: int, gpus: int, pods: int) -> Path:
    """1,000 x 8 GPUs by default, one tenant whose quota fits every pod, virtual images without pulls."""
    cfg = {
        "name": "gpupoc-bench-http",
        "pools": [{"name": "bench", "nodes": nodes, "gpus_per_node": gpus, "labels": {"gpupoc.io/pool": "bench"},
                   "gpu": {"model_name": "NVIDIA H100 80GB HBM3", "memory_mib": 81559}}],
        "tenants": [{"name": TENANT, "namespace": TENANT, "quota": {"gpus": pods, "pods": pods},
                     "priority_classes": ["bench-normal"]}],
        "priority_classes": [{"name": "bench-normal", "value": 1000, "preemption_policy": "Never",
                              "global_default": True}],
        "images": [{"pattern": "gpupoc/virtual:*", "kind": "virtual", "pull_seconds": 0}],
        "timing": {"termination_grace_seconds": 0},
    }
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def pod_body(prefix: str, i: int) -> dict:
    """A pod shaped like the POC's: labels, env, one GPU, the pool's selector; it runs until deleted."""
    return {
        "apiVersion": "v1", "kind": "Pod",
        "metadata": {"name": f"{prefix}-{i:05d}", "labels": {"app": "bench-http", "pass": prefix, "index": str(i)},
                     "annotations": {"gpupoc.io/bench": "sim_http"}},
        "spec": {"restartPolicy": "Never", "nodeSelector": {"gpupoc.io/pool": "bench"},
                 "priorityClassName": "bench-normal", "terminationGracePeriodSeconds": 0,
                 "containers": [{"name": "main", "image": "gpupoc/virtual:1",
                                 "env": [{"name": "WORKLOAD_DURATION_SECONDS", "value": "3600"},
                                         {"name": "WORKLOAD_GPU_UTIL", "value": "90"}],
                                 "resources": {"limits": {"nvidia.com/gpu": "1"}}}]},
    }


class Server:
    """``gpupoc sim serve --config`` in its own directory (optionally under cProfile), stopped by process id."""

    def __init__(self, data_dir: Path, config: Path, profile: Path | None = None):
        data_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir = data_dir
        self.log = (data_dir / "server.log").open("w")
        prefix = [sys.executable, "-m", "cProfile", "-o", str(profile), "-m", "gpupoc.cli"] if profile else \
            [sys.executable, "-m", "gpupoc.cli"]
        self.proc = subprocess.Popen([*prefix, "sim", "serve", "--port", "0", "--data-dir", str(data_dir),
                                      "--config", str(config), "--log-level", "WARNING"],
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 120
        while not (data_dir / "sim.json").exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gpupoc sim serve did not start: {(data_dir / 'server.log').read_text()[-2000:]}")
            time.sleep(0.1)
        time.sleep(0.1)
        info = json.loads((data_dir / "sim.json").read_text())
        self.kubeconfig = info["kubeconfig_http"]
        self.audit_log = Path(info["audit_log"])

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / CLK_TCK  # utime, stime (fields 14 and 15 of stat)

    def create_times(self, prefix: str) -> dict[str, float]:
        """Pod name -> the audit stageTimestamp (epoch seconds) of its successful create."""
        out = {}
        for line in self.audit_log.read_text().splitlines():
            if f'"{prefix}-' not in line:
                continue
            ev = json.loads(line)
            ref = ev.get("objectRef") or {}
            if ev["verb"] == "create" and ref.get("resource") == "pods" and ev["responseStatus"]["code"] == 201:
                out[ref["name"]] = datetime.fromisoformat(ev["stageTimestamp"].replace("Z", "+00:00")).timestamp()
        return out

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


@dataclass
class Trace:
    """What one mode saw: request times per pod and watch receive times per pod."""

    sent: dict[str, float] = field(default_factory=dict)
    answered: dict[str, float] = field(default_factory=dict)
    added: dict[str, float] = field(default_factory=dict)
    delivered: dict[str, float] = field(default_factory=dict)  # ADDED as the raw watcher received it
    scheduled: dict[str, float] = field(default_factory=dict)
    deleted: dict[str, float] = field(default_factory=dict)
    delete_sent: float = 0.0
    delete_answered: float = 0.0
    requests: int = 0


class Progress:
    """The watcher's counts, shared with the creating process; ``see`` records receive times."""

    def __init__(self, ctx) -> None:
        self.ready = ctx.Event()
        self.scheduled_count = ctx.Value("i", 0)
        self.deleted_count = ctx.Value("i", 0)

    def see(self, trace: Trace, type_: str, name: str, scheduled: bool) -> None:
        now = time.time()
        if type_ == "ADDED":
            trace.added.setdefault(name, now)
        if type_ in ("ADDED", "MODIFIED") and scheduled and name not in trace.scheduled:
            trace.scheduled[name] = now
            self.scheduled_count.value = len(trace.scheduled)
        if type_ == "DELETED" and name not in trace.deleted:
            trace.deleted[name] = now
            self.deleted_count.value = len(trace.deleted)


def _is_scheduled(conditions) -> bool:
    return any(c.type == "PodScheduled" and c.status == "True" for c in conditions or [])


def _wait(what: str, done, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while not done():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached within {timeout:.0f} s")
        time.sleep(0.01)


# ---- the watcher: its own process, as the POC's observers and triggerers are ----
def watcher(mode: str, kubeconfig: str, n: int, timeout: float, progress: Progress, out: str) -> None:
    """Watch the tenant's pods with the mode's client until ``n`` DELETED events; write the receive times."""
    trace = Trace()
    if mode == "threads":
        from kubernetes import client, config, watch

        core = client.CoreV1Api(config.new_client_from_config(config_file=kubeconfig, context=TENANT))
        rv = core.list_namespaced_pod(TENANT).metadata.resource_version
        progress.ready.set()
        for ev in watch.Watch().stream(core.list_namespaced_pod, TENANT, resource_version=rv,
                                       timeout_seconds=int(timeout)):
            pod = ev["object"]
            progress.see(trace, ev["type"], pod.metadata.name, _is_scheduled(pod.status and pod.status.conditions))
            if len(trace.deleted) >= n:
                break
    else:
        async def run() -> None:
            from kubernetes_asyncio import client, config, watch

            api = await config.new_client_from_config(config_file=kubeconfig, context=TENANT)
            core = client.CoreV1Api(api)
            rv = (await core.list_namespaced_pod(TENANT)).metadata.resource_version
            progress.ready.set()
            async with watch.Watch().stream(core.list_namespaced_pod, TENANT, resource_version=rv,
                                            timeout_seconds=int(timeout)) as stream:
                async for ev in stream:
                    pod = ev["object"]
                    progress.see(trace, ev["type"], pod.metadata.name,
                                 _is_scheduled(pod.status and pod.status.conditions))
                    if len(trace.deleted) >= n:
                        break
            await api.close()

        asyncio.run(run())
    Path(out).write_text(json.dumps({"added": trace.added, "scheduled": trace.scheduled, "deleted": trace.deleted}))


# ---- the server's delivery, without a client library's parsing ----
def raw_watcher(kubeconfig: str, n: int, timeout: float, ready, out: str) -> None:
    """Read the tenant's pod watch as JSON lines (aiohttp, ``json.loads`` only) until ``n`` DELETED events;
    write the receive time of each pod's ADDED event: what the server delivers, before any model parsing."""
    async def run() -> dict[str, float]:
        import aiohttp

        kc = yaml.safe_load(Path(kubeconfig).read_text())
        ctx = next(c["context"] for c in kc["contexts"] if c["name"] == TENANT)
        token = next(u["user"]["token"] for u in kc["users"] if u["name"] == ctx["user"])
        url = next(c["cluster"]["server"] for c in kc["clusters"] if c["name"] == ctx["cluster"])
        added: dict[str, float] = {}
        deleted = 0
        async with aiohttp.ClientSession(headers={"Authorization": f"Bearer {token}"}) as session:
            async with session.get(f"{url}/api/v1/namespaces/{TENANT}/pods", params={
                    "watch": "true", "timeoutSeconds": str(int(timeout))},
                    timeout=aiohttp.ClientTimeout(total=timeout + 30)) as resp:
                ready.set()
                async for line in resp.content:
                    now = time.time()
                    ev = json.loads(line)
                    if ev["type"] == "ADDED":
                        added.setdefault(ev["object"]["metadata"]["name"], now)
                    elif ev["type"] == "DELETED":
                        deleted += 1
                        if deleted >= n:
                            break
        return added

    Path(out).write_text(json.dumps({"added": asyncio.run(run())}))


# ---- the creating side ----
@dataclass(frozen=True)
class Pass:
    """One pass of a mode: its pod name prefix and pace (0: as fast as the clients go)."""

    mode: str
    rate: float

    @property
    def prefix(self) -> str:
        return f"{self.mode}-{'paced' if self.rate else 'max'}"

    def slot(self, t0: float, i: int) -> float:
        return t0 + i / self.rate if self.rate else 0.0


def drive_threads(server: Server, p: Pass, n: int, concurrency: int, timeout: float, progress: Progress) -> Trace:
    from kubernetes import client, config

    api = config.new_client_from_config(config_file=server.kubeconfig, context=TENANT)
    api.configuration.connection_pool_maxsize = concurrency + 2
    core = client.CoreV1Api(api)
    trace = Trace()
    names = [f"{p.prefix}-{i:05d}" for i in range(n)]
    t0 = time.time()

    def create(i: int) -> None:
        time.sleep(max(0.0, p.slot(t0, i) - time.time()))
        trace.sent[names[i]] = time.time()
        core.create_namespaced_pod(TENANT, pod_body(p.prefix, i))
        trace.answered[names[i]] = time.time()

    def delete(name: str) -> None:
        core.delete_namespaced_pod(name, TENANT, grace_period_seconds=0)

    with ThreadPoolExecutor(concurrency) as pool:
        list(pool.map(create, range(n)))
        _wait(f"every pod scheduled ({p.prefix})", lambda: progress.scheduled_count.value >= n, timeout)
        trace.delete_sent = time.time()
        list(pool.map(delete, names))
        trace.delete_answered = time.time()
    _wait(f"every pod deleted ({p.prefix})", lambda: progress.deleted_count.value >= n, timeout)
    api.close()
    return trace


async def _drive_asyncio(server: Server, p: Pass, n: int, concurrency: int, timeout: float,
                         progress: Progress) -> Trace:
    from kubernetes_asyncio import client, config

    api = await config.new_client_from_config(config_file=server.kubeconfig, context=TENANT)
    api.configuration.connection_pool_maxsize = concurrency + 2
    core = client.CoreV1Api(api)
    trace = Trace()
    names = [f"{p.prefix}-{i:05d}" for i in range(n)]
    gate = asyncio.Semaphore(concurrency)
    t0 = time.time()

    async def create(i: int) -> None:
        await asyncio.sleep(max(0.0, p.slot(t0, i) - time.time()))
        async with gate:
            trace.sent[names[i]] = time.time()
            await core.create_namespaced_pod(TENANT, pod_body(p.prefix, i))
            trace.answered[names[i]] = time.time()

    async def delete(name: str) -> None:
        async with gate:
            await core.delete_namespaced_pod(name, TENANT, grace_period_seconds=0)

    async def until(what: str, counter) -> None:
        deadline = time.monotonic() + timeout
        while counter.value < n:
            if time.monotonic() > deadline:
                raise TimeoutError(f"{what} not reached within {timeout:.0f} s")
            await asyncio.sleep(0.01)

    await asyncio.gather(*(create(i) for i in range(n)))
    await until(f"every pod scheduled ({p.prefix})", progress.scheduled_count)
    trace.delete_sent = time.time()
    await asyncio.gather(*(delete(x) for x in names))
    trace.delete_answered = time.time()
    await until(f"every pod deleted ({p.prefix})", progress.deleted_count)
    await api.close()
    return trace


def drive_asyncio(server: Server, p: Pass, n: int, concurrency: int, timeout: float, progress: Progress) -> Trace:
    return asyncio.run(_drive_asyncio(server, p, n, concurrency, timeout, progress))


MODES = {"threads": drive_threads, "asyncio": drive_asyncio}


def run_pass(server: Server, p: Pass, n: int, concurrency: int, timeout: float, work: Path) -> Trace:
    """The pass's watcher processes (the mode's client, and a raw reader), then its creates and deletes here;
    the watchers' times merged in."""
    ctx = multiprocessing.get_context("spawn")
    progress = Progress(ctx)
    out, raw_out, raw_ready = work / f"watch-{p.prefix}.json", work / f"raw-{p.prefix}.json", ctx.Event()
    procs = [ctx.Process(target=watcher, args=(p.mode, server.kubeconfig, n, timeout, progress, str(out)),
                         daemon=True),
             ctx.Process(target=raw_watcher, args=(server.kubeconfig, n, timeout, raw_ready, str(raw_out)),
                         daemon=True)]
    for proc in procs:
        proc.start()
    if not (progress.ready.wait(60) and raw_ready.wait(60)):
        raise TimeoutError(f"the {p.prefix} watchers did not start within 60 s")
    time.sleep(0.3)  # the watch request is sent once the list answered; give it time to reach the server
    trace = MODES[p.mode](server, p, n, concurrency, timeout, progress)
    for proc in procs:
        proc.join(timeout)
    seen = json.loads(out.read_text())
    trace.added, trace.scheduled, trace.deleted = seen["added"], seen["scheduled"], seen["deleted"]
    trace.delivered = json.loads(raw_out.read_text())["added"]
    trace.requests = 2 * n + 3  # creates, deletes, the client watcher's list and watch, the raw watch
    return trace


def pct(values: list[float], q: float) -> float:
    values = sorted(values)
    return values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))] if values else float("nan")


def figures(server: Server, p: Pass, trace: Trace, cpu: float, n: int) -> dict[str, float]:
    t0 = min(trace.sent.values())
    server_times = server.create_times(p.prefix)
    lag = [trace.added[x] - server_times[x] for x in trace.added if x in server_times]
    delivery = [trace.delivered[x] - server_times[x] for x in trace.delivered if x in server_times]
    to_sched = [trace.scheduled[x] - trace.sent[x] for x in trace.scheduled if x in trace.sent]
    return {
        "created_per_s": n / (max(trace.answered.values()) - t0),
        "scheduled_per_s": n / (max(trace.scheduled.values()) - t0),
        "create_to_scheduled_p50_s": pct(to_sched, 0.5),
        "create_to_scheduled_p99_s": pct(to_sched, 0.99),
        "deleted_per_s": n / (trace.delete_answered - trace.delete_sent),
        "watch_p50_s": pct(lag, 0.5),
        "watch_p99_s": pct(lag, 0.99),
        "delivery_p50_s": pct(delivery, 0.5),
        "delivery_p99_s": pct(delivery, 0.99),
        "server_cpu_ms_per_request": 1000 * cpu / trace.requests,
    }


def one_run(args: argparse.Namespace, passes: list[Pass], work: Path, run: int) -> dict[str, dict[str, float]]:
    config = cluster_config(work / "cluster.yaml", args.nodes, args.gpus, args.pods)
    profile = Path(args.profile).resolve() if args.profile and run == 0 else None
    server = Server(work / f"sim-{run}", config, profile)
    out = {}
    try:
        for p in passes:
            cpu0 = server.cpu_seconds()
            trace = run_pass(server, p, args.pods, args.concurrency, args.timeout, work)
            out[p.prefix] = figures(server, p, trace, server.cpu_seconds() - cpu0, args.pods)
            print(f"run {run + 1} {p.prefix:14}: " + ", ".join(f"{k} {v:.3g}" for k, v in out[p.prefix].items()),
                  flush=True)
    finally:
        server.stop()
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--gpus", type=int, default=8)
    ap.add_argument("--pods", type=int, default=2000, help="pods per pass (default 2000)")
    ap.add_argument("--concurrency", type=int, default=16, help="threads / tasks creating and deleting")
    ap.add_argument("--rate", type=float, default=TARGET_CREATED, help="pods/s of the paced pass (0: no paced pass)")
    ap.add_argument("--modes", nargs="+", choices=sorted(MODES), default=["threads", "asyncio"])
    ap.add_argument("--runs", type=int, default=3, help="fresh servers; the median of each figure is printed")
    ap.add_argument("--timeout", type=float, default=300.0, help="seconds a pass may wait for its watch")
    ap.add_argument("--profile", help="write the first server's cProfile stats to this file")
    args = ap.parse_args(argv)
    passes = [Pass(m, r) for m in args.modes for r in ([0.0, args.rate] if args.rate else [0.0])]
    work = Path(tempfile.mkdtemp(prefix="gpupoc-bench-http-"))
    try:
        runs = [one_run(args, passes, work, r) for r in range(args.runs)]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{args.nodes} nodes x {args.gpus} GPUs, {args.pods} pods per pass, concurrency {args.concurrency}, "
          f"median of {args.runs} run(s):")
    med = {p.prefix: {k: statistics.median(r[p.prefix][k] for r in runs) for k in runs[0][p.prefix]} for p in passes}
    for prefix, m in med.items():
        print(f"  {prefix:14} created {m['created_per_s']:4.0f} pods/s | scheduled {m['scheduled_per_s']:4.0f} pods/s "
              f"(create->scheduled p50 {m['create_to_scheduled_p50_s']:.2f} s, p99 {m['create_to_scheduled_p99_s']:.2f} s)"
              f" | deleted {m['deleted_per_s']:4.0f} pods/s | watch p50 {1000 * m['watch_p50_s']:4.0f} ms, "
              f"p99 {1000 * m['watch_p99_s']:4.0f} ms (server delivery p50 {1000 * m['delivery_p50_s']:.0f} ms, "
              f"p99 {1000 * m['delivery_p99_s']:.0f} ms) | server CPU {m['server_cpu_ms_per_request']:.2f} ms/request")
    fastest = min(m["created_per_s"] for prefix, m in med.items() if prefix.endswith("-max"))
    paced = [m["watch_p99_s"] for prefix, m in med.items() if prefix.endswith("-paced")]
    ok = fastest >= TARGET_CREATED and all(x <= TARGET_WATCH_P99 for x in paced)
    print(f"  reference: KWOK {KWOK:.0f} pods/s; target >= {TARGET_CREATED:.0f} pods/s created, watch p99 <= "
          f"{TARGET_WATCH_P99:.0f} s at {args.rate:.0f} pods/s: {'MET' if ok else 'NOT MET'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
