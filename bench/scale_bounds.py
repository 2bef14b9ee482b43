"""Memory and time of the evidence stages at scale: a synthetic congestion wave of N pods in bulk shards (the
scale plan's wave, ``plans/scale.yaml``, scaled to N) goes through the real steps, each in its own process, and
prints each stage's wall time and peak resident memory (targets: each stage under 1 GiB, the report under 30 s).

No cluster runs: ``bench/scale_wave.py`` models the wave (creation at ``--create-rate``, one release, placement at
``--place-rate`` in priority order on ``--nodes`` nodes x 8 GPUs) and answers the steps' API calls as the
simulated cluster would at a virtual time. What the wave's other tasks write (run parameters, nodes, the
shards' submissions and pod transitions, the release, an audit log with every create and release) is written
first, outside the measured stages. Stages:

- baseline: the interpreter, the steps' modules and the synthetic wave alone (what each stage starts from);
- observe: ``steps.wave.observe`` (``pipeline/observe.py``), a snapshot every ``snapshot_interval_seconds`` of
  the plan from before the first pod exists until every pod ended; it checkpoints every snapshot, as it does at
  15 s snapshots;
- collect: ``steps.collect.collect`` (``collect_evidence``: every attempt, the tables, the manifest);
- validate: ``steps.finish.validate`` (``validation/runner.py``, Great Expectations and Data Docs);
- report: ``report.build.build_report`` (every format but the PDF), then the sealed bundle, timed apart.

    .venv/bin/python bench/scale_bounds.py [--pods 10000] [--nodes 1000] [--keep DIR]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from datetime import timedelta
from pathlib import Path

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

from scale_wave import T0, WaveApi, place, templates_and_pods  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
RUN_ID = "bench__scale"
TC = "queue_congestion"
STAGES = ("baseline", "observe", "collect", "validate", "report")
GIB = 1024**3
TARGET_BYTES, REPORT_SECONDS = GIB, 30.0


def _peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # Linux: KiB


def write_plan(work: Path, pods: int, nodes: int) -> Path:
    """plans/scale.yaml with its evidence under ``work``, its wave scaled to ``pods`` and ``nodes`` nodes."""
    data = yaml.safe_load((REPO / "plans" / "scale.yaml").read_text())
    data["evidence_root"] = str(work / "evidence")
    data["evidence_sources"]["audit_log_path"] = str(work / "audit.log")
    data["platform"].update(kubeconfig=str(work / "kubeconfig"), simulated=True)  # never read: the wave answers
    (work / "kubeconfig").write_text("apiVersion: v1\nkind: Config\nclusters: []\ncontexts: []\nusers: []\n")
    data["platform"].pop("simulator_config", None)
    wave = data["test_classes"][TC]["wave"]
    total = sum(e["count"] for e in wave)
    for e in wave:
        e["count"] = max(1, round(e["count"] * pods / total))
    wave[-1]["count"] += pods - sum(e["count"] for e in wave)
    next(p for p in data["pools"] if p["name"] == "training")["nodes"] = nodes
    path = work / "scale.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False))
    return path


class Clients:
    """``RunContext.factory``: the synthetic wave for every context."""

    def __init__(self, api: WaveApi):
        self.api = api

    def caller(self, context: str, component: str | None = None) -> WaveApi:
        return self.api


def wave(plan_file: Path, args: argparse.Namespace, task: str):
    """The run's context on the synthetic wave (the same wave in every process), and the wave's end."""
    from gpupoc.steps.context import RunContext

    ctx = RunContext(str(plan_file), f"poc_{TC}", RUN_ID, TC, task)
    plan = ctx.plan
    pool = next(p for p in plan.pools if p.name == "training")
    nodes = {f"training-node-{i}": pool.gpus_per_node for i in range(pool.nodes)}
    bodies, pods = templates_and_pods(plan, RUN_ID, TC, ctx.spec.submission.shard_size, args.create_rate)
    place(pods, nodes, args.place_rate)
    api = WaveApi(bodies, pods, nodes, dict(pool.node_selector), {p.name: p.value for p in plan.priority_classes})
    ctx._factory = Clients(api)
    return ctx, api, max(p.finished for p in pods)


def prepare(plan_file: Path, args: argparse.Namespace) -> dict:
    """What the run's other tasks would have written before the measured stages (not measured)."""
    from gpupoc.common.timefmt import rfc3339
    from gpupoc.pipeline.attempts import Submission
    from gpupoc.pipeline.pod_transitions import PodTransitions
    from gpupoc.plan.platforms import comparable_data

    ctx, api, end = wave(plan_file, args, "prepare")
    w = ctx.writer
    w.write_json("run_params", {"params": {}, "plan_file": str(plan_file), "started_at": rfc3339(T0)})
    w.write_json("plan", comparable_data(ctx.plan))
    w.write_json("identity", {"username": "kubernetes-admin", "groups": [], "source": "bench"})
    nodes = api.call("GET", "/api/v1/nodes").body["items"]
    w.write_json("nodes", [{"name": n["metadata"]["name"], "labels": n["metadata"]["labels"],
                            "allocatable": n["status"]["allocatable"]} for n in nodes])
    w.write("platform_info", [{"key": "kubernetes.gitVersion", "value": "v1.31.4", "source": "/version"},
                              {"key": "adapter", "value": "kube-scheduler", "source": "plan"},
                              {"key": "nodes", "value": str(len(nodes)), "source": "/api/v1/nodes"}],
            source="kubernetes-api")
    release = api.pods[0].released
    rows, shards, audit = [], {}, []
    for p in api.pods:
        w.write_json(f"submission-{p.item}-try1", Submission(p.item, p.namespace, p.name, p.created, 1).to_dict())
        rows.append({"workload_key": p.item, "pod": p.name, "namespace": p.namespace, "created_at": rfc3339(p.created),
                     "released_at": rfc3339(release), "by_this_try": True})
        t = PodTransitions(p.namespace, p.name, p.item)
        for api.now in (p.started + timedelta(seconds=0.5), end + timedelta(seconds=5)):  # as the watch saw it
            t.observe(api.pod(p))
        shards.setdefault(p.shard, []).append(t.to_dict())
        api.now = p.created
        audit.append(_audit(p, "create", api.pod(p), p.created))
        api.now = release
        audit.append(_audit(p, "patch", api.pod(p), release))
    for n, ts in shards.items():
        w.write_json(f"pod_transitions-shard{n}", ts)
        w.write_json(f"bulk_shard-{n}", {"shard": n, "pods": len(ts), "errors": [], "undecided": []})
    w.write_json("release", {"expected": len(rows), "found": len(rows), "missing": [], "rows": rows,
                             "all_exist_at": rfc3339(release), "arrival_spread_seconds": None,
                             "release_spread_seconds": 0.1, "errors": [], "observer_ready": True})
    Path(ctx.plan.evidence_sources.audit_log_path).write_text(
        "".join(json.dumps(e, separators=(",", ":")) + "\n" for e in audit))
    return {"pods": len(api.pods), "shards": len(shards), "wave_seconds": (end - T0).total_seconds(),
            "audit_mib": round(Path(ctx.plan.evidence_sources.audit_log_path).stat().st_size / 2**20, 1)}


def _audit(p, verb: str, pod: dict, at) -> dict:
    """The simulated cluster's audit event of a create or a release patch (level RequestResponse)."""
    from gpupoc.common.timefmt import rfc3339

    user = f"system:serviceaccount:{p.namespace}:runner" if verb == "create" else "kubernetes-admin"
    return {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "level": "RequestResponse", "auditID": p.name + verb,
            "stage": "ResponseComplete", "requestURI": f"/api/v1/namespaces/{p.namespace}/pods"
            + ("" if verb == "create" else f"/{p.name}"), "verb": verb, "user": {"username": user},
            "sourceIPs": ["127.0.0.1"], "userAgent": "bench",
            "objectRef": {"resource": "pods", "namespace": p.namespace, "name": p.name, "apiVersion": "v1"},
            "responseStatus": {"metadata": {}, "code": 201 if verb == "create" else 200},
            "requestObject": pod if verb == "create" else {"spec": {"schedulingGates": []}}, "responseObject": pod,
            "requestReceivedTimestamp": rfc3339(at), "stageTimestamp": rfc3339(at)}


def baseline(plan_file: Path, args: argparse.Namespace) -> dict:
    """What every stage's process holds before its work: the interpreter, the steps' modules, the synthetic wave."""
    import gpupoc.steps.collect  # noqa: F401
    import gpupoc.steps.wave  # noqa: F401

    t0 = time.perf_counter()
    wave(plan_file, args, "baseline")
    return {"seconds": time.perf_counter() - t0}


def observe(plan_file: Path, args: argparse.Namespace) -> dict:
    from functools import partial

    from gpupoc.pipeline import observe as O
    from gpupoc.steps import wave as steps_wave

    ctx, api, _end = wave(plan_file, args, "observe")
    rss: list[int] = []

    def advance(seconds: float) -> None:  # between two snapshots: what the observer holds then
        rss.append(_rss_mib())
        api.advance(seconds)

    def virtual_seconds() -> float:  # the wave's own time: a look takes none of it, as on a fast observer
        return (api.clock() - T0).total_seconds()

    steps_wave.observe_wave = partial(O.observe_wave, sleep=advance, clock=api.clock, monotonic=virtual_seconds)
    steps_wave.CHECKPOINT_SECONDS = 0.0  # looks come faster here than at 15 s: saves paced by their own cost only
    t0 = time.perf_counter()
    out = steps_wave.observe(ctx)
    return {"seconds": time.perf_counter() - t0, "snapshots": out["snapshots"], "rows": out["rows"],
            "open": len(out["open_at_deadline"]), "rss_mib_between_snapshots": rss,
            "observations_mib": _mib(ctx.files("observations")),
            "observed_pods_mib": _mib(ctx.files("observed_pods"))}


def collect(plan_file: Path, args: argparse.Namespace) -> dict:
    from gpupoc.common.timefmt import rfc3339
    from gpupoc.steps.collect import collect as collect_step

    ctx, api, end = wave(plan_file, args, "collect_evidence")
    api.now = end + timedelta(seconds=5)
    t0 = time.perf_counter()
    out = collect_step(ctx, rfc3339(T0))
    return {"seconds": time.perf_counter() - t0, "attempts": out.get("attempts"),
            "explained_ratio": out.get("explained_ratio"), "ready_p99_ms": out.get("ready_p99_ms")}


def validate(plan_file: Path, args: argparse.Namespace) -> dict:
    from gpupoc.steps.context import RunContext
    from gpupoc.steps.finish import validate as validate_step

    ctx = RunContext(str(plan_file), f"poc_{TC}", RUN_ID, TC, "validate")
    t0 = time.perf_counter()
    out = validate_step(ctx, str(ctx.run_dir))
    return {"seconds": time.perf_counter() - t0, "failed_checks": out["failed_checks"]}


def report(plan_file: Path, args: argparse.Namespace) -> dict:
    from gpupoc.plan import load_plan_file
    from gpupoc.report.build import build_report
    from gpupoc.report.bundle import bundle_path, create, spec_for_report

    plan = load_plan_file(str(plan_file))
    t0 = time.perf_counter()
    res = build_report(plan.evidence_root_path, out_dir=plan.evidence_root_path / "report" / "bench", plan=str(plan_file))
    built = time.perf_counter() - t0
    t1 = time.perf_counter()
    bundle = create(spec_for_report(res.out_dir), bundle_path(res.out_dir))
    return {"seconds": built, "bundle_seconds": time.perf_counter() - t1, "decision": res.report.decision.value,
            "html_mib": _mib(res.paths["html"]), "bundle_mib": _mib(bundle)}


def _rss_mib() -> int:
    """The process's resident memory now (MiB)."""
    pages = int(Path("/proc/self/statm").read_text().split()[1])
    return round(pages * resource.getpagesize() / 2**20)


def _mib(path: Path) -> float:
    return round(Path(path).stat().st_size / 2**20, 1) if Path(path).is_file() else 0.0


def child(stage: str, plan_file: Path, args: argparse.Namespace) -> None:
    fn = {"prepare": prepare, "baseline": baseline, "observe": observe, "collect": collect, "validate": validate,
          "report": report}[stage]
    out = fn(plan_file, args)
    print(json.dumps({**out, "peak_rss": _peak()}))


def run_stage(stage: str, plan_file: Path, args: argparse.Namespace) -> dict:
    cmd = [sys.executable, __file__, "--stage", stage, "--plan", str(plan_file), "--create-rate",
           str(args.create_rate), "--place-rate", str(args.place_rate)]
    t0 = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True)
    if done.returncode != 0:
        raise SystemExit(f"stage {stage} failed:\n{done.stderr[-4000:]}")
    return {**json.loads(done.stdout.strip().splitlines()[-1]), "process_seconds": time.perf_counter() - t0}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--pods", type=int, default=10000)
    ap.add_argument("--nodes", type=int, default=1000)
    ap.add_argument("--create-rate", type=float, default=257.0, help="pods created per second (bulk: ~257)")
    ap.add_argument("--place-rate", type=float, default=158.0, help="pods placed per second (simulated: ~158)")
    ap.add_argument("--stages", nargs="+", choices=STAGES, default=list(STAGES))
    ap.add_argument("--keep", help="write the evidence under this directory and keep it")
    ap.add_argument("--stage", choices=("prepare", *STAGES), help=argparse.SUPPRESS)
    ap.add_argument("--plan", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.stage:
        child(args.stage, Path(args.plan), args)
        return 0
    with tempfile.TemporaryDirectory(prefix="gpupoc-scale-") as tmp:
        work = Path(args.keep or tmp)
        work.mkdir(parents=True, exist_ok=True)
        plan_file = write_plan(work, args.pods, args.nodes)
        prep = run_stage("prepare", plan_file, args)
        print(f"wave: {prep['pods']:,} pods in {prep['shards']} shards on {args.nodes:,} nodes x 8 GPUs, "
              f"{prep['wave_seconds']:.0f} s of virtual time; audit log {prep['audit_mib']} MiB "
              f"(prepared in {prep['process_seconds']:.0f} s, not measured)")
        print(f"{'stage':<9} {'wall s':>8} {'peak RSS':>10}  figures")
        ok = True
        for stage in args.stages:
            out = run_stage(stage, plan_file, args)
            rest = {k: v for k, v in out.items() if k not in ("seconds", "peak_rss", "process_seconds")}
            print(f"{stage:<9} {out['seconds']:>8.1f} {out['peak_rss'] / 2**20:>6.0f} MiB  {rest}", flush=True)
            ok &= out["peak_rss"] < TARGET_BYTES and (stage != "report" or out["seconds"] < REPORT_SECONDS)
    print(f"targets (each stage < 1 GiB, report < {REPORT_SECONDS:.0f} s): {'met' if ok else 'NOT met'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
