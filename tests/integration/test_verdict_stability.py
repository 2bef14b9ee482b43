"""Verdicts that hold: a correct platform reaches the same verdicts whatever its timing and wording, and a
defective one fails its check whatever they are.

The congestion class runs through the pipeline's own steps (``class_runner``: observer, release, collection,
validation; only Airflow's wave tasks are stood in for) against the simulated cluster under each behaviour
profile of a correct platform (``gpupoc sim serve --behaviour``): the order and timing of gate releases and
the preemptions that follow, Kueue-style eviction and requeue, Volcano's, KAI's and Chinese wording (waits
explained in Chinese naming the short resource), controllers that recreate pods under new names, throttling, cut watches,
expiring watches (410 Gone), a slow API, a Metadata-only audit log. Every item
verdict of its report must equal the plain cluster's, and no workload may be lost. The defective side is
``test_fault_profiles_reach_the_report.py``, where each fault profile runs together with a behaviour profile.
The four other classes, with all their probes, run under the API's manners (``throttled``, ``watch-cuts``,
``watch-expiry``) in ``test_class_verdict_stability.py``.
"""

from __future__ import annotations

import json
import multiprocessing
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import pytest
import yaml

from gpupoc.validation.suites import load_suites

from .class_runner import ClassRun, run_class
from .plans import plan_on_cluster

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900), pytest.mark.xdist_group("verdict-stability")]

# Twice the training pool (48 GPUs asked of 24) with every priority: high 8- and 4-GPU jobs, normal 2-GPU
# jobs, low 1-GPU sweeps that wait for a second round; short virtual workloads.
WAVE = [
    {"workload": "v-train-8g", "tenant": "team-vision", "count": 2},
    {"workload": "v-train-4g", "tenant": "team-nlp", "count": 2},
    {"workload": "v-train-2g", "tenant": "team-vision", "count": 2},
    {"workload": "v-train-2g", "tenant": "team-nlp", "count": 2},
    {"workload": "v-sweep-1g", "tenant": "team-vision", "count": 8},
    {"workload": "v-sweep-1g", "tenant": "team-nlp", "count": 8},
]
DURATIONS = {"v-train-8g": 10, "v-train-4g": 8, "v-train-2g": 8, "v-sweep-1g": 8}


def congestion_plan(tmp: Path, sim, submission: str = "operator") -> Path:
    plan = plan_on_cluster("default", tmp, sim.kubeconfig_http, sim.audit_log)
    for w in plan["workloads"]:
        if w["name"] in DURATIONS:
            w["duration_seconds"] = DURATIONS[w["name"]]
    qc = plan["test_classes"]["queue_congestion"]
    qc.update(wave=WAVE, snapshot_interval_seconds=1, gate_timeout_seconds=60)
    qc["resubmission"] = {"limit": 2, "platform_requeues": False, "wait_seconds": 20}
    qc["submission"] = {"mode": submission, "shard_size": 10, "qps": 20, "burst": 5}
    qc["thresholds"]["max_wait_seconds"] = 120
    qc["services"][0]["traffic_seconds"] = 30  # the online service keeps its SLO through the wave's start
    path = tmp / "plan.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


def item_verdicts(verdicts: dict[str, str], unjudged: frozenset[str] = frozenset()) -> dict[str, str]:
    """Check verdicts folded into item verdicts as the report does: a failed check fails its item; a
    not-verified check that is not optional leaves it not verified; not-applicable checks count for nothing.
    Checks in ``unjudged`` (a run's observer missed some of their waits: ``ClassRun.unseen``) are left out."""
    meta = {(e.get("meta") or {})["check_id"]: e["meta"] for s in load_suites() for e in s.data["expectations"]}
    out: dict[str, str] = {}
    for cid, v in verdicts.items():
        if cid in unjudged:
            continue
        m = meta[cid]
        if v == "not_verified" and m.get("optional"):
            continue
        # not applicable never lifts an item above pass; an item of only not-applicable checks stays so
        rank = {"not_applicable": -1, "pass": 0, "not_verified": 1, "fail": 2}
        item = m["item"]
        out[item] = max(out.get(item, "not_applicable"), v, key=rank.__getitem__)
    return out


# Every behaviour profile at least once; profiles that vary different layers (release timing, the scheduler's
# wording and requeueing, the API's manners, the audit level) share a cluster to keep the suite short. Three
# seeds of the staggered release give three different release orders and preemption patterns.
BEHAVIOURS = [
    ("release-staggered,kueue-requeue", 1),
    ("release-staggered,volcano-wording,watch-cuts", 2),
    ("release-staggered,kai-wording,throttled", 3),
    ("controller-recreates,slow-api,audit-metadata,zh-wording", 0),
]
# The same wave submitted in bulk shards (``submission.mode: bulk``) through a throttling API that cuts watches,
# and through one whose watches expire (410 Gone after compaction: the shards' watches list again). The bulk
# shards are the pipeline's watchers, so the watch profiles are run with them.
BULK = "bulk:"
BEHAVIOURS.append((f"{BULK}release-staggered,throttled,watch-cuts", 4))
BEHAVIOURS.append((f"{BULK}release-staggered,watch-expiry", 5))
# The observer reads by watch too (one list per collection, then watches): its watches expire the same way.
BEHAVIOURS.append(("release-staggered,watch-expiry", 6))
PLAIN = ("", 0)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """The congestion class on the plain cluster and under each behaviour profile, each on its own simulated
    cluster, run side by side (three at a time, in processes): the runs mostly wait for their waves, and
    the extra load on the machine is one more timing they must not depend on."""
    from .conftest import launch

    cases = [PLAIN, *BEHAVIOURS]
    sims, futures = {}, {}
    ctx = multiprocessing.get_context("fork")
    try:
        with ProcessPoolExecutor(max_workers=3, mp_context=ctx) as pool:
            for behaviours, seed in cases:
                tmp = tmp_path_factory.mktemp("stability")
                bulk = behaviours.startswith(BULK)
                served = behaviours.removeprefix(BULK)
                sims[(behaviours, seed)] = sim = launch(tmp / "sim", behaviours=served, behaviour_seed=seed)
                plan = congestion_plan(tmp, sim, "bulk" if bulk else "operator")
                futures[(behaviours, seed)] = pool.submit(run_class, plan, "queue_congestion",
                                                          f"stability__{'bulk_' if bulk else ''}{served or 'plain'}_{seed}")
            return {case: f.result() for case, f in futures.items()}
    finally:
        for sim in sims.values():
            sim.stop()


def same_items(a: ClassRun, b: ClassRun) -> tuple[dict[str, str], dict[str, str]]:
    """The two runs' item verdicts over the checks both judged: a check one run's harness left unjudged (waits
    no snapshot or event saw, traffic the load generator's own lag distorted) is compared in neither."""
    unjudged = a.unseen | b.unseen
    if unjudged:
        print(f"\nnot compared, left unjudged by the harness: {sorted(unjudged)} ({a.summary.get('unobserved')}, "
              f"{b.summary.get('unobserved')} waits unseen; {a.summary.get('slo_harness_lag')}, "
              f"{b.summary.get('slo_harness_lag')} SLOs not verified for the load generator's lag)")
    return item_verdicts(a.verdicts, unjudged), item_verdicts(b.verdicts, unjudged)


def observer_collections(run: ClassRun) -> list[dict]:
    """What the observer's watches cost: per collection its lists, relists after 410 and watches."""
    path = run.run_dir / "files" / "observer_api.json"
    return json.loads(path.read_text()) if path.is_file() else []


def shard_watches(run: ClassRun) -> dict[str, int]:
    """The bulk shards' watches summed over the run (none for a run submitted by the operator)."""
    out = {"watches": 0, "relists": 0, "gone_410": 0}
    for path in sorted((run.run_dir / "files").glob("bulk_shard-*.json")):
        done = json.loads(path.read_text())
        for k in out:
            out[k] += int(done.get(k) or 0)
    return out


def test_the_plain_cluster_passes_every_congestion_item_and_loses_nothing(runs):
    plain = runs[PLAIN]
    assert not plain.errors, plain.errors
    items = item_verdicts(plain.verdicts, plain.unseen)
    # every item passes, but one whose every check is conditional on a case the wave never raised
    assert set(items.values()) <= {"pass", "not_applicable"} and "pass" in items.values(), (items, plain.verdicts)
    assert "lost" not in plain.summary["outcomes"], plain.summary
    assert plain.summary["needing_explanation"] >= 3, f"the wave made workloads wait: {plain.summary}"


@pytest.mark.parametrize("behaviour, seed", BEHAVIOURS, ids=[f"{b}:{s}" for b, s in BEHAVIOURS])
def test_a_correct_platform_reaches_the_plain_clusters_verdicts_whatever_its_behaviour(runs, behaviour, seed):
    run, plain = runs[(behaviour, seed)], runs[PLAIN]
    assert not run.errors, run.errors
    mine, theirs = same_items(run, plain)
    assert mine == theirs, \
        f"{behaviour} (seed {seed}): {run.verdicts} against the plain cluster's {plain.verdicts}; {run.summary}"
    assert "lost" not in run.summary["outcomes"], run.summary
    assert run.summary["submission"] == ("bulk" if behaviour.startswith(BULK) else "operator"), run.summary
    watched, observed = shard_watches(run), observer_collections(run)
    assert observed and all(c["lists"] == 1 + c["relists_after_gone"] for c in observed if not c["listing_only"]), \
        f"the observer listed a collection again without a 410 Gone: {observed}"
    if "watch-expiry" in behaviour and behaviour.startswith(BULK):
        assert watched["gone_410"] >= 1, f"no watch of the shards met a 410 Gone: watch-expiry untested ({watched})"
    elif "watch-expiry" in behaviour:
        assert sum(c["relists_after_gone"] for c in observed) >= 1, \
            f"no watch of the observer met a 410 Gone: watch-expiry untested ({observed})"
    print(f"\n{behaviour} (seed {seed}): shards' watches {watched}; outcomes {run.summary['outcomes']}, waits explained "
          f"{run.summary['explained']}/{run.summary['needing_explanation']}, resubmitted {run.summary['resubmitted']}")
