"""What Airflow costs on top of the platform: one wave submitted directly and through the pipeline's DAG.

In one run on one simulated cluster (32 nodes x 8 GPUs by default, quotas large enough), the same wave of N
one-GPU pods running ``--duration`` seconds is submitted

- directly: the plan's pods (``gpupoc.podspec.build_pod``, no gate) created with the ``kubernetes`` client by
  a pool of threads, each as its tenant, its answers kept as bytes (typed models would cost the bench's own
  process some 4 CPU-seconds at 10,000 pods, on the cores the platform runs on);
- through Airflow: ``poc_queue_congestion`` triggered on a real deployment (api-server, scheduler with
  LocalExecutor, triggerer, dag-processor) with a generated plan whose wave is those N pods: mapped
  deferrable ``GpuWorkloadOperator`` (KubernetesPodOperator) tasks, gated, released together by
  ``release_gate``.

Printed per path: wall time from trigger until the wave is done (direct: every pod terminal, as of the list that
found them so; Airflow: the last wave task's end as Airflow recorded it; also when the pods were done and when the
DAG run ended, as Airflow recorded it; while the DAG runs the bench polls Airflow only, and takes the pods' creations and ends from the
audit log and one list after the wave: a list of 10,000 pods every poll would load the platform it measures), time until every pod exists, the
spread of the moments the platform could first schedule them (direct: pod creations; gated: gate removals; both
from the API server's audit log), Airflow CPU seconds per wave task (psutil over each component's process tree),
peak memory, the wall-time ratio, and where the Airflow time goes (scheduler, task start-up, triggerer notice
and resume). ``--variants`` compares Airflow set-ups in the same run (``as-configured``: the runtime as
shipped; ``no-preload``: without the scheduler's preload of the task modules, see VARIANTS). Usage::

    python bench/orchestration_overhead.py                          # sizes 40 and 200, as-configured
    python bench/orchestration_overhead.py --sizes 1000             # 125 nodes: as many as the wave needs
    python bench/orchestration_overhead.py --sizes 40 --variants as-configured no-preload
    python bench/orchestration_overhead.py --submission bulk operator --sizes 1000 10000 --nodes 1250
"""

from __future__ import annotations

import argparse
import json
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime, timedelta, timezone
from pathlib import Path

import psutil
import yaml

REPO = Path(__file__).resolve().parents[1]
DAG_ID = "poc_queue_congestion"
WORKLOAD = "v-train-1g"
TENANTS = ("team-vision", "team-nlp", "team-serving")
REFERENCE = ("measured before (stand-in API server, `airflow standalone`): 200 tasks 440 s vs 31 s direct "
             "(ratio 14); 50 tasks 115 s vs 30 s (ratio 3.8)")
# bulk: one shard per tenant up to 5,000 pods; the shard's client may send 500 requests at once, then 500/s (the 3
# shards together 1,500/s, more than the simulated API server takes: 10,000 direct creations take about 10 s); the
# release's one client up to 2,000 at once, then 2,000/s (64 in flight): the API server, not the client, sets the pace
BULK_RATE = {"shard_size": 5000, "qps": 500, "burst": 500, "release_qps": 2000, "release_burst": 2000}
WAVE_TASKS = ("wave", "bulk_shard")  # the operator's task per pod, the bulk submitter's task per shard
BULK_TARGET = ("bulk targets: ratio <= 1.3 at 1,000 pods and <= 1.5 at 10,000; release spread <= 1 s at 1,000; at "
               "10,000 pods done <= 1.3 x direct and the run's end, verdict included, <= 1.5 x direct")
TARGET = ("targets: ratio <= 2 at 200 pods and <= 2.5 at 1,000; <= 0.5 Airflow CPU-s per wave task; gated release "
          "spread <= 1 s")


def parse_ts(value: str | None) -> datetime | None:
    if not value:
        return None
    return datetime.fromisoformat(value.replace("Z", "+00:00"))


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    values = sorted(values)
    return round(values[min(len(values) - 1, int(q * (len(values) - 1) + 0.5))], 1)


# ---- the cluster and the plan ----
def cluster_config(path: Path, nodes: int, gpus_per_node: int, max_pods: int) -> Path:
    cfg = yaml.safe_load((REPO / "include/gpupoc/sim/default_cluster.yaml").read_text())
    total = nodes * gpus_per_node
    for pool in cfg["pools"]:
        if pool["name"] == "training":
            pool["nodes"], pool["gpus_per_node"] = nodes, gpus_per_node
    for t in cfg["tenants"]:
        t["quota"] = {"gpus": total, "pods": max_pods}
    for cq in cfg["kueue"]["cluster_queues"]:
        if cq["name"] == "training-cq":
            cq["nominal_gpus"] = total
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


def bench_plan(path: Path, n: int, duration: int, nodes: int, gpus_per_node: int, max_pods: int,
               kubeconfig: Path, audit_log: Path, submission: str = "operator") -> Path:
    plan = yaml.safe_load((REPO / "plans/default.yaml").read_text())
    plan["platform"]["kubeconfig"] = str(kubeconfig)
    plan["evidence_root"] = str(path.parent / f"evidence-{n}")
    plan["evidence_sources"]["audit_log_path"] = str(audit_log)
    tomorrow = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=1)
    plan["window"].update(start=tomorrow.isoformat(), end=(tomorrow + timedelta(days=7)).isoformat())
    for pool in plan["pools"]:
        if pool["name"] == "training":
            pool.update(nodes=nodes, gpus_per_node=gpus_per_node,
                        node_names=[f"training-node-{i}" for i in range(1, nodes + 1)])
    for t in plan["tenants"]:
        t["quota"] = {"gpus": nodes * gpus_per_node, "pods": max_pods}
    for w in plan["workloads"]:
        if w["name"] == WORKLOAD:
            w["duration_seconds"] = duration
    qc = plan["test_classes"]["queue_congestion"]
    share = [n // len(TENANTS) + (1 if i < n % len(TENANTS) else 0) for i in range(len(TENANTS))]
    qc["wave"] = [{"workload": WORKLOAD, "tenant": t, "count": c} for t, c in zip(TENANTS, share) if c]
    qc["gate_timeout_seconds"] = 3600
    qc["snapshot_interval_seconds"] = 5 if n <= 1000 else 15  # above 1,000 pods as plans/scale.yaml observes
    qc["submission"] = {"mode": submission, **BULK_RATE}
    qc["services"] = []  # the same wave on both paths: the direct path deploys no online service beside it
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


class Sim:
    """``gpupoc sim serve --config`` in its own directory, stopped by process id."""

    def __init__(self, data_dir: Path, config: Path):
        data_dir.mkdir(parents=True, exist_ok=True)
        self.data_dir = data_dir
        self.log = (data_dir / "server.log").open("w")
        self.proc = subprocess.Popen([sys.executable, "-m", "gpupoc.cli", "sim", "serve", "--port", "0",
                                      "--data-dir", str(data_dir), "--config", str(config)],
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + 90
        while not (data_dir / "sim.json").exists():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"gpupoc sim serve did not start: {(data_dir / 'server.log').read_text()[-2000:]}")
            time.sleep(0.2)
        time.sleep(0.2)
        self.info = json.loads((data_dir / "sim.json").read_text())
        self.kubeconfig = Path(self.info["kubeconfig"])
        self.audit_log = data_dir / "audit.log"

    def audit(self) -> list[dict]:
        lines = self.audit_log.read_text().splitlines() if self.audit_log.exists() else []
        return [json.loads(x) for x in lines if x.strip()]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()


def _core(sim: Sim, context: str = "admin"):
    from kubernetes import client, config

    path = sim.kubeconfig.with_name(sim.kubeconfig.name + "-http")
    api = config.new_client_from_config(config_file=str(path if path.exists() else sim.kubeconfig), context=context)
    api.configuration.connection_pool_maxsize = 32
    return client.CoreV1Api(api)


def _pods(core, run_label: str) -> list[dict]:
    """The run's pods as plain JSON (the client's typed models cost seconds of this process's CPU per list of
    10,000 pods, taken from the machine the platform runs on)."""
    resp = core.list_pod_for_all_namespaces(label_selector=f"gpupoc.io/run-id={run_label}", _preload_content=False)
    return json.loads(resp.data)["items"]


def _phase(p: dict) -> str:
    return (p.get("status") or {}).get("phase") or ""


# ---- CPU and memory of process trees ----
class Sampler(threading.Thread):
    """Every second: CPU seconds (own + reaped children) and RSS of each named process tree, and each process's
    own peak RSS (``peaks``: pid -> (tree, command line, MiB)); trees in ``aside`` (the simulated API server)
    are sampled per process but left out of the sums."""

    def __init__(self, roots: dict[str, int], aside: dict[str, int] | None = None):
        super().__init__(daemon=True)
        self.roots, self.aside = roots, dict(aside or {})
        self.cpu: dict[str, float] = {k: 0.0 for k in roots}
        self.peaks: dict[int, tuple[str, str, float]] = {}
        self.own_peaks: dict[int, float] = {}  # pid -> peak USS (MiB): the pages no other process shares
        self.peak_rss_mib = 0.0
        self.peak_pss_mib = 0.0
        self.samples = 0
        self.stop_event = threading.Event()

    def _tree(self, pid: int) -> list:
        try:
            root = psutil.Process(pid)
            return [root, *root.children(recursive=True)]
        except psutil.Error:
            return []

    def _peak(self, name: str, p, rss: float) -> None:
        old = self.peaks.get(p.pid)
        if old is None or rss / 2**20 > old[2]:  # named as it was then: an executor's worker runs task after task
            self.peaks[p.pid] = (name, _label(p), rss / 2**20)

    def sample(self) -> None:
        rss = pss = 0.0
        self.samples += 1
        with_pss = self.samples % 5 == 1  # proportional set size reads smaps: every 5th sample
        for name, pid in self.roots.items():
            total = 0.0
            for p in self._tree(pid):
                try:
                    t = p.cpu_times()
                    total += t.user + t.system + t.children_user + t.children_system
                    if with_pss:
                        info = p.memory_full_info()
                        rss, pss = rss + info.rss, pss + getattr(info, "pss", info.rss)
                        self._peak(name, p, info.rss)
                        own = getattr(info, "uss", info.rss) / 2**20
                        self.own_peaks[p.pid] = max(self.own_peaks.get(p.pid, 0.0), own)
                    else:
                        one = p.memory_info().rss
                        rss += one
                        self._peak(name, p, one)
                except psutil.Error:
                    continue
            self.cpu[name] = max(self.cpu[name], total)
        for name, pid in self.aside.items():
            for p in self._tree(pid):
                try:
                    self._peak(name, p, p.memory_info().rss)
                except psutil.Error:
                    continue
        self.peak_rss_mib = max(self.peak_rss_mib, rss / 2**20)
        self.peak_pss_mib = max(self.peak_pss_mib, pss / 2**20)

    def run(self) -> None:
        while not self.stop_event.wait(1.0):
            self.sample()

    def snapshot(self) -> dict[str, float]:
        self.sample()
        return dict(self.cpu)

    def process_peaks(self, tasks: dict[str, str] | None = None, top: int = 12) -> list[dict]:
        """The processes with the highest peak RSS: tree, command line, MiB (per process, sampled each second);
        a task instance's id in a command line (LocalExecutor's worker title) is followed by its task
        (``tasks``: id -> task)."""
        rows = sorted(self.peaks.items(), key=lambda r: -r[1][2])[:top]
        out = []
        for pid, (tree, label, mib) in rows:
            named = next((f"{label} ({task})" for tid, task in (tasks or {}).items() if tid and tid in label), label)
            own = self.own_peaks.get(pid)
            out.append({"tree": tree, "process": named, "peak_rss_mib": round(mib),
                        "peak_uss_mib": None if own is None else round(own)})
        return out


def _label(p) -> str:
    """A process as ``ps`` names it: its title (Airflow sets one per task) or its command line, shortened."""
    try:
        cmd = " ".join(p.cmdline()) or p.name()
    except psutil.Error:
        return "?"
    return cmd.replace(str(REPO), ".")[:140]


def _spread(moments: list[datetime]) -> float | None:
    return round((max(moments) - min(moments)).total_seconds(), 3) if moments else None


# ---- (a) direct ----
def run_direct(sim: Sim, plan_path: Path, n: int, timeout: float) -> dict:
    from gpupoc.plan import class_items, load_plan
    from gpupoc.podspec.build import build_pod
    from gpupoc.podspec.labels import safe_label_value

    plan = load_plan(plan_path)
    run_id = f"direct-{n}-{uuid.uuid4().hex[:6]}"
    items = class_items(plan, "queue_congestion")
    cores = {t.name: _core(sim, t.kube_context) for t in plan.tenants}
    admin = _core(sim)
    bodies = []
    for item in items:
        t = plan.tenant(item.tenant)
        pod = build_pod(plan.workload(item.workload), t, plan, run_id=run_id, test_class="queue_congestion",
                        wave_gate=False, name=f"{item.name}-{uuid.uuid4().hex[:8]}", priority_class=item.priority_class)
        bodies.append((t, pod))
    t0 = time.monotonic()
    started = datetime.now(timezone.utc)
    # answers kept as JSON bytes: the client's typed models cost this process some 4 CPU-seconds at 10,000 pods
    with ThreadPoolExecutor(max_workers=16) as pool:
        list(pool.map(lambda tp: cores[tp[0].name].create_namespaced_pod(tp[0].namespace, tp[1],
                                                                        _preload_content=False), bodies))
    all_exist = time.monotonic() - t0
    label = safe_label_value(run_id)
    while True:
        asked = time.monotonic() - t0  # a list that finds every pod ended: they had ended when it was asked
        pods = _pods(admin, label)
        if len(pods) >= n and all(_phase(p) in ("Succeeded", "Failed") for p in pods):
            break
        if time.monotonic() - t0 > timeout:
            raise RuntimeError(f"direct wave of {n}: not done after {timeout:.0f} s")
        time.sleep(0.5)
    wall = asked
    names = {p["metadata"]["name"] for p in pods}
    creates = [parse_ts(e["stageTimestamp"]) for e in sim.audit()
               if e.get("verb") == "create" and (e.get("objectRef") or {}).get("resource") == "pods"
               and (e.get("objectRef") or {}).get("name") in names and e["responseStatus"]["code"] in (200, 201)]
    for ns in {t.namespace for t, _ in bodies}:
        admin.delete_collection_namespaced_pod(ns, label_selector=f"gpupoc.io/run-id={label}", _preload_content=False)
        # and its pods' events: the DAG's observer watches every event of the namespace, so the direct wave's some
        # 50,000 would double what it reads; each path starts on the same clean namespaces
        admin.delete_collection_namespaced_event(ns, _preload_content=False)
    return {"path": "direct", "n": n, "wall_s": round(wall, 1), "all_exist_s": round(all_exist, 1),
            "schedulable_spread_s": _spread(creates), "phases": sorted({_phase(p) for p in pods}),
            "started_at": started.isoformat()}


# ---- (b) through Airflow ----
def run_airflow(sim: Sim, settings, state, plan_path: Path, n: int, timeout: float) -> dict:
    from gpupoc.airflow_runtime.client import AirflowClient
    from gpupoc.podspec.labels import safe_label_value

    af = AirflowClient.for_home(settings.home)
    af.token()  # the bench's own sign-in, before the clock starts: a user triggering a run is signed in already
    admin = _core(sim)
    sampler = Sampler(dict(state.pids), {"simulated API server": sim.proc.pid})
    sampler.start()
    cpu0 = sampler.snapshot()
    sim_cpu0 = _tree_cpu(sim.proc.pid)
    t0 = time.monotonic()
    triggered = datetime.now(timezone.utc)
    marks: dict[str, float] = {}
    run = af.trigger(DAG_ID, {"plan": str(plan_path), "faults_note": f"orchestration overhead bench, {n} pods"})
    marks["trigger_answered"] = time.monotonic() - t0
    run_id = run["dag_run_id"]
    label = safe_label_value(run_id)
    pods: list = []
    wave: dict = {}
    try:
        while True:  # Airflow's view only: a list of every pod each poll would load the platform being measured
            tis = af.task_instances(DAG_ID, run_id)
            wave = {(t["task_id"], t.get("map_index")): t for t in tis if t["task_id"] in WAVE_TASKS}
            bulk = any(t["task_id"] == "bulk_shard" for t in wave.values())
            if (bulk or len(wave) >= n) and wave and all(t["state"] in ("success", "failed", "upstream_failed", "skipped")
                                      for t in wave.values()):
                if "wave_done" not in marks:
                    marks["wave_done"] = time.monotonic() - t0
                    pods = _pods(admin, label)  # once, before the run's cleanup removes them
            state_ = af.get_run(DAG_ID, run_id).get("state")
            if state_ in ("success", "failed"):
                marks.setdefault("run_end", time.monotonic() - t0)
                break
            if time.monotonic() - t0 > timeout:
                raise RuntimeError(f"airflow wave of {n}: run {run_id} still {state_} after {timeout:.0f} s")
            time.sleep(2.0)
    finally:
        cpu1 = sampler.snapshot()
        sampler.stop_event.set()
    sim_cpu = _tree_cpu(sim.proc.pid) - sim_cpu0
    cpu = {k: round(cpu1[k] - cpu0.get(k, 0.0), 1) for k in cpu1}
    audit = sim.audit()
    names = {e["objectRef"]["name"] for e in audit if e.get("verb") == "create"
             and (e.get("objectRef") or {}).get("resource") == "pods" and e["responseStatus"]["code"] in (200, 201)
             and (((e.get("requestObject") or {}).get("metadata") or {}).get("labels") or {}).get(
                 "gpupoc.io/run-id") == label}
    releases = _removals(audit, names)
    created = [parse_ts(e["stageTimestamp"]) for e in audit if e.get("verb") == "create"
               and (e.get("objectRef") or {}).get("name") in names and not (e.get("objectRef") or {}).get("subresource")]
    if len(names) >= n:  # as the platform recorded them: the last creation, the last pod's end
        marks["all_exist"] = (max(created) - triggered).total_seconds()
    finished = [_finished_at(p) for p in pods]
    if len(pods) >= n and all(finished):
        marks["pods_done"] = (max(finished) - triggered).total_seconds()
    profile = _profile(tis, audit, names, run, pods)
    profile["task timeline (s from run start: started, ended)"] = timeline(tis, run)
    queued = parse_ts(run.get("queued_at"))
    profile["trigger (s: answered, run queued after the request)"] = [
        round(marks["trigger_answered"], 2), queued and round((queued - triggered).total_seconds(), 2)]
    final = af.get_run(DAG_ID, run_id)
    # the wave's last task end as Airflow recorded it, not when polled; a wave task that never ran (the per-pod
    # task mapped over nothing while shards submit, skipped) has no end and is no part of the wave
    ran = [t for t in wave.values() if not (t["state"] == "skipped" and not t.get("start_date"))]
    ends = [parse_ts(t.get("end_date")) for t in ran if t.get("end_date")]
    if ends and len(ends) == len(ran):
        marks["wave_done"] = (max(ends) - triggered).total_seconds()
    run_ended = parse_ts(final.get("end_date"))  # as Airflow recorded it, not when the 2 s poll saw it
    if run_ended is not None:
        marks["run_end"] = (run_ended - triggered).total_seconds()
    return {"path": "airflow", "n": n, "run_id": run_id, "startup": evidence_startup(plan_path, run_id) or startup(pods),
            "process_peaks": sampler.process_peaks({str(t.get("id")): f"{t['task_id']}[{t.get('map_index')}]"
                                                    for t in tis}), "run_state": final.get("state"),
            "wave_states": sorted({t["state"] for t in wave.values()}), "pods_created": len(names),
            "wall_s": round(marks.get("wave_done", marks.get("pods_done", 0.0)), 1),
            "pods_done_s": round(marks.get("pods_done", 0.0), 1), "run_end_s": round(marks.get("run_end", 0.0), 1),
            "all_exist_s": round(marks.get("all_exist", 0.0), 1), "schedulable_spread_s": _spread(releases),
            "airflow_cpu_s": cpu, "airflow_cpu_per_task_s": round(sum(cpu.values()) / n, 2),
            "sim_cpu_s": round(sim_cpu, 1), "peak_rss_mib": round(sampler.peak_rss_mib),
            "peak_pss_mib": round(sampler.peak_pss_mib), "profile": profile}


def startup(pods: list) -> dict:
    """Start-up latency (kube-burner's conditions, nearest-rank p50/p95/p99 in ms, from the pod's release) and
    the scheduling pace, from each pod's final state."""
    from gpupoc.pipeline.pod_transitions import PodTransitions, latency_rows, scheduling_throughput

    found = []
    for d in pods:
        t = PodTransitions(d["metadata"]["namespace"], d["metadata"]["name"], "")
        t.observe(d)
        found.append(t)
    rows = {r["condition"]: {k: r[k] for k in ("p50_ms", "p95_ms", "p99_ms")} for r in latency_rows(found, "bench")}
    return {**rows, "pods_per_second": scheduling_throughput(found)["pods_per_second"]}


def evidence_startup(plan_path: Path, run_id: str) -> dict:
    """The run's own ``startup_latency`` rows (``collect_evidence``: in bulk from the shards' watches, every
    first-True transition), in the shape of ``startup``; empty when the run wrote none."""
    import pyarrow.parquet as pq

    from gpupoc.evidence.writer import run_dir_for
    from gpupoc.plan import load_plan

    table = run_dir_for(load_plan(plan_path).evidence_root_path, DAG_ID, run_id) / "tables" / "startup_latency.parquet"
    if not table.is_file():
        return {}
    rows = pq.read_table(table).to_pylist()
    out = {r["condition"]: {k: r[k] for k in ("p50_ms", "p95_ms", "p99_ms")} for r in rows}
    return {**out, "pods_per_second": rows[0]["pods_per_second"] if rows else None,
            "source": rows[0]["source"] if rows else None}


def timeline(tis: list[dict], run: dict) -> dict[str, list]:
    """Each task's start and end in seconds from the run's start (a mapped task: its first start, last end)."""
    run_start = parse_ts(run.get("start_date")) or parse_ts(run.get("queued_at"))
    out: dict[str, list] = {}
    for t in tis:
        start, end = parse_ts(t.get("start_date")), parse_ts(t.get("end_date"))
        if not (run_start and start):
            continue
        s, e = round((start - run_start).total_seconds(), 1), end and round((end - run_start).total_seconds(), 1)
        old = out.get(t["task_id"])
        out[t["task_id"]] = [min(old[0], s), max(old[1] or 0, e or 0) or None] if old else [s, e]
    return dict(sorted(out.items(), key=lambda kv: kv[1][0]))


def _tree_cpu(pid: int) -> float:
    try:
        root = psutil.Process(pid)
        return sum(sum(p.cpu_times()[:4]) for p in [root, *root.children(recursive=True)])
    except psutil.Error:
        return 0.0


def _profile(tis: list[dict], audit: list[dict], names: set[str], run: dict, pods: list) -> dict:
    """Where the wall time of the wave tasks goes, per pod (medians and 90th percentiles, seconds), from the task
    instances, the pods and the API server's audit log (pod creations and log reads are audited)."""
    created: dict[str, datetime] = {}
    first_log: dict[str, datetime] = {}
    for e in audit:
        ref = e.get("objectRef") or {}
        name = ref.get("name")
        if name not in names or ref.get("resource") != "pods":
            continue
        ts = parse_ts(e["stageTimestamp"])
        if e.get("verb") == "create" and not ref.get("subresource"):
            created[name] = ts
        elif ref.get("subresource") == "log":
            first_log.setdefault(name, ts)  # the trigger noticed the end (it reads the log tail of a success)
    by_index = {str(t.get("map_index")): t for t in tis if t["task_id"] == "wave"}
    run_start = parse_ts(run.get("start_date")) or parse_ts(run.get("queued_at"))
    startup, notice, resume, first_start = [], [], [], []
    for p in pods:
        name = p["metadata"]["name"]
        ti = by_index.get((p["metadata"].get("labels") or {}).get("map_index", ""))
        st = ((p.get("status") or {}).get("containerStatuses") or [{}])[0]
        finished = parse_ts(((st.get("state") or {}).get("terminated") or {}).get("finishedAt"))
        if ti and ti.get("start_date") and name in created:
            startup.append((created[name] - parse_ts(ti["start_date"])).total_seconds())
            if run_start:
                first_start.append((parse_ts(ti["start_date"]) - run_start).total_seconds())
        if finished and name in first_log:
            notice.append((first_log[name] - finished).total_seconds())
        if ti and ti.get("end_date") and name in first_log:
            resume.append((parse_ts(ti["end_date"]) - first_log[name]).total_seconds())

    def stat(values: list[float]) -> dict:
        return {"median": pct(values, 0.5), "p90": pct(values, 0.9), "max": pct(values, 1.0), "n": len(values)}

    shards = [t for t in tis if t["task_id"] == "bulk_shard" and t.get("start_date") and t.get("end_date")]
    if shards:  # bulk: a few tasks, each submitting and following its shard
        return {"bulk shard tasks": len(shards),
                "shard task started after run start": stat([(parse_ts(t["start_date"]) - run_start).total_seconds()
                                                            for t in shards if run_start]),
                "shard task duration": stat([(parse_ts(t["end_date"]) - parse_ts(t["start_date"])).total_seconds()
                                             for t in shards]),
                "pod creations spread": _spread(list(created.values())),
                "pod creations (s from run start: first, last)": _window(list(created.values()), run_start),
                "gate removals (s from run start: first, last)": _window(_removals(audit, names), run_start)}
    return {
        "wave task started after run start (scheduler/executor)": stat(first_start),
        "task start to pod created (start-up: fork, parse, build, POST)": stat(startup),
        "pod finished to the trigger's notice (its log read)": stat(notice),
        "notice to the task's end (in the triggerer on success, else a resume on a worker)": stat(resume),
        "pod creations spread": _spread(list(created.values())),
        "tries > 1": sum(1 for t in by_index.values() if (t.get("try_number") or 1) > 1),
    }


def _finished_at(pod: dict) -> datetime | None:
    st = ((pod.get("status") or {}).get("containerStatuses") or [{}])[0]
    return parse_ts(((st.get("state") or {}).get("terminated") or {}).get("finishedAt"))


def _window(moments: list[datetime], start: datetime | None) -> list[float] | None:
    if not (moments and start):
        return None
    return [round((min(moments) - start).total_seconds(), 1), round((max(moments) - start).total_seconds(), 1)]


def _removals(audit: list[dict], names: set[str]) -> list[datetime]:
    return [parse_ts(e["stageTimestamp"]) for e in audit if e.get("verb") == "patch"
            and (e.get("objectRef") or {}).get("name") in names and "schedulingGates" in json.dumps(e.get("requestObject"))]


_IMPORT_PROBE = """
import json, sys, time, runpy
out = {}
def step(name, fn):
    c0, t0 = time.process_time(), time.perf_counter()
    fn()
    out[name] = {"cpu_s": round(time.process_time() - c0, 2), "wall_s": round(time.perf_counter() - t0, 2)}
step("import airflow.sdk", lambda: __import__("airflow.sdk"))
step("import the KubernetesPodOperator module", lambda: __import__("airflow.providers.cncf.kubernetes.operators.pod"))
step("import gpupoc.dags.factory", lambda: __import__("gpupoc.dags.factory"))
step("run dags/poc_queue_congestion.py (builds the DAG, reads the plan)", lambda: runpy.run_path(sys.argv[1]))
print(json.dumps(out))
"""


def import_costs(settings) -> dict:
    """What a fresh task process pays before it does any work: the imports and the DAG file (one cold run)."""
    from gpupoc.airflow_runtime.settings import process_env

    res = subprocess.run([sys.executable, "-c", _IMPORT_PROBE, str(REPO / "dags" / f"{DAG_ID}.py")],
                         env=process_env(settings), capture_output=True, text=True, timeout=300, cwd=str(REPO))
    try:
        return json.loads(res.stdout.strip().splitlines()[-1])
    except (ValueError, IndexError):
        return {"error": (res.stdout + res.stderr)[-500:]}


VARIANTS = {
    "as-configured": "the runtime as shipped: the scheduler preloads the task modules before forking workers "
                     "and the dag-processor the DAG files' imports before forking parsers "
                     "(airflow_runtime/preload), DAG files re-parsed every 300 s, operator polls every 5 s, "
                     "a succeeded pod ends its task in the triggerer",
    "no-preload": "as shipped but without the scheduler's preload: every task process imports the operator itself",
}


def print_report(rows: list[dict], imports: dict | None = None) -> None:
    print("\n== orchestration overhead: the same wave directly and through Airflow ==")
    print(REFERENCE)
    print(TARGET)
    print(BULK_TARGET)
    for n in sorted({r["n"] for r in rows}):
        d = next((r for r in rows if r["n"] == n and r["path"] == "direct"), None)
        print(f"\n-- {n} one-GPU pods, {rows[0].get('duration', 30)} s each --")
        if d:
            print(f"direct : wall {d['wall_s']:7.1f} s | all exist after {d['all_exist_s']:6.1f} s | "
                  f"schedulable spread (creations) {d['schedulable_spread_s']} s")
        for a in (r for r in rows if r["n"] == n and r["path"] == "airflow"):
            ratio = f"{a['wall_s'] / d['wall_s']:.2f}" if d and d["wall_s"] else "n/a"
            print(f"airflow [{a.get('variant')}: {VARIANTS.get(a.get('variant'), '')}] submission "
                  f"{a.get('submission', 'operator')}")
            print(f"         wall {a['wall_s']:7.1f} s -> RATIO {ratio} (pods done {a['pods_done_s']} s, DAG run ends "
                  f"{a['run_end_s']} s, {a['run_state']}) | all exist after {a['all_exist_s']:6.1f} s | "
                  f"schedulable spread (gate removals) {a['schedulable_spread_s']} s")
            if a.get("submission") == "bulk" and d and d["wall_s"]:
                done, verdict = a["pods_done_s"] / d["wall_s"], a["run_end_s"] / d["wall_s"]
                print(f"         pods done {done:.2f} x direct (target 1.3); the run's end, verdict included, "
                      f"{verdict:.2f} x direct (target 1.5)")
            cpu = sum(a["airflow_cpu_s"].values())
            per = "pod" if a.get("submission") == "bulk" else "wave task"
            print(f"         Airflow CPU {cpu:.0f} s = {a['airflow_cpu_per_task_s']} s per {per}"
                  f"  ({a['airflow_cpu_s']}); simulated API server {a['sim_cpu_s']} s; peak Airflow memory "
                  f"PSS {a['peak_pss_mib']} MiB (RSS summed per process {a['peak_rss_mib']} MiB)")
            st = a.get("startup") or {}
            print(f"         start-up (ms from release, {st.get('source') or 'final pod states'}) " + " | ".join(
                f"{c} p50 {v['p50_ms']} p95 {v['p95_ms']} p99 {v['p99_ms']}" for c, v in st.items()
                if isinstance(v, dict)) + f" | scheduling {st.get('pods_per_second')} pods/s")
            print("         peak RSS per process (sampled each second; own: its peak USS, the pages it shares with no other"
                  " process, such as the modules the scheduler preloaded before forking it, sampled every 5 s):")
            for r in a.get("process_peaks") or []:
                own = "" if r.get("peak_uss_mib") is None else f" (own {r['peak_uss_mib']} MiB)"
                print(f"           {r['peak_rss_mib']:6d} MiB{own}  [{r['tree']}] {r['process']}")
            print("         where the time goes (s):")
            for k, v in a["profile"].items():
                print(f"           {k}: {v}")
    if imports:
        print("\ntask start-up, paid twice per deferrable task (submit, resume) in a fresh process:")
        for k, v in imports.items():
            print(f"  {k}: {v}")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--sizes", type=int, nargs="+", default=[40, 200])
    p.add_argument("--duration", type=int, default=30, help="seconds each pod runs")
    p.add_argument("--nodes", type=int, default=None,
                   help="simulated nodes (default: 32, or as many as the largest wave needs)")
    p.add_argument("--gpus-per-node", type=int, default=8)
    p.add_argument("--parallelism", type=int, default=12, help="Airflow [core] parallelism")
    p.add_argument("--variants", nargs="+", choices=sorted(VARIANTS), default=["as-configured"],
                   help="Airflow set-ups to compare, each on a fresh deployment: " +
                        "; ".join(f"{k}: {v}" for k, v in VARIANTS.items()))
    p.add_argument("--submission", nargs="+", choices=("operator", "bulk"), default=["operator"],
                   help="how the pipeline submits the wave: one task per pod (operator), one per shard (bulk)")
    p.add_argument("--timeout", type=float, default=1800.0, help="per wave")
    p.add_argument("--work-dir", help="keep everything here (default: a temporary directory, removed)")
    p.add_argument("--json", help="also write the figures to this file")
    args = p.parse_args(argv)
    if args.nodes is None:
        args.nodes = max(32, -(-max(args.sizes) // args.gpus_per_node))
    if max(args.sizes) > args.nodes * args.gpus_per_node:
        p.error(f"--sizes: {max(args.sizes)} pods need more than the {args.nodes * args.gpus_per_node} GPUs; "
                "raise --nodes")
    from gpupoc.airflow_runtime.client import AirflowClient
    from gpupoc.airflow_runtime.processes import down, up
    from gpupoc.airflow_runtime.settings import RuntimeSettings, free_port

    work = Path(args.work_dir) if args.work_dir else Path(tempfile.mkdtemp(prefix="gpupoc-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    max_pods = max(args.sizes) * 2 + 50
    sim = Sim(work / "sim", cluster_config(work / "cluster.yaml", args.nodes, args.gpus_per_node, max_pods))
    rows: list[dict] = []
    imports: dict = {}
    settings = None
    try:
        plans = {(n, mode): bench_plan(work / f"plan-{n}-{mode}.yaml", n, args.duration, args.nodes,
                                       args.gpus_per_node, max_pods, sim.kubeconfig, sim.audit_log, mode)
                 for n in args.sizes for mode in args.submission}
        for n in args.sizes:
            rows.append({**run_direct(sim, plans[(n, args.submission[0])], n, args.timeout),
                         "duration": args.duration})
            print(json.dumps(rows[-1]), flush=True)
        for variant in args.variants:
            env = {"GPUPOC_PLAN": str(plans[(args.sizes[0], args.submission[0])])}
            settings = RuntimeSettings(home=work / f"airflow-{variant}", port=free_port(),
                                       parallelism=args.parallelism, paused_at_creation=True, extra_env=env,
                                       preload=variant != "no-preload")
            t0 = time.monotonic()
            state = up(settings)
            print(f"airflow [{variant}] up in {time.monotonic() - t0:.0f} s", flush=True)
            af = AirflowClient.for_home(settings.home)
            af.wait_dag(DAG_ID, timeout=180)
            af.unpause(DAG_ID)
            imports = imports or import_costs(settings)
            for n, mode in ((n, mode) for n in args.sizes for mode in args.submission):
                rows.append({**run_airflow(sim, settings, state, plans[(n, mode)], n, args.timeout),
                             "variant": variant, "submission": mode})
                print(json.dumps(rows[-1]), flush=True)
            down(settings.home)
            settings = None
    finally:
        if settings is not None:
            down(settings.home)
        sim.stop()
        if args.json:
            Path(args.json).write_text(json.dumps(rows, indent=2, default=str))
        if not args.work_dir:
            shutil.rmtree(work, ignore_errors=True)
    print_report(rows, imports)
    return 0


if __name__ == "__main__":
    sys.exit(main())
