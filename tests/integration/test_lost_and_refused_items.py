"""One end for every item: the congestion class on a cluster that loses a running pod without a record, and on
one whose admission webhook refuses a pod's creation.

The class runs through the pipeline's own steps (``class_runner``: observer, release, service observer,
collection, validation; the wave tasks stood in for, deciding each ended attempt as ``GpuWorkloadOperator``
does) on the verdict-stability wave. In both runs every item is judged and no task waits for a pod nobody will
create: the observer and the service observer end with nothing open (``complete``), not at their deadlines.
- ``pod-lost``: the vanished attempt is ``lost`` in the evidence, TR-01 fails, and the wave task's message
  (``attempt_decision.task_message``) says the same outcome and record as its ``workload_runs`` row;
- ``admission-refused``: the refused item ends ``rejected`` with the webhook's own message, in the task's
  decision and in the evidence, and TR-01 passes (the refusal is the platform's own record).
"""

from __future__ import annotations

import multiprocessing
from concurrent.futures import ProcessPoolExecutor

import pyarrow.parquet as pq
import pytest

from gpupoc.sim.admission_webhook import WEBHOOK
from gpupoc.steps.attempt_decision import task_message

from .class_runner import ClassRun, run_class
from .test_verdict_stability import congestion_plan

pytestmark = [pytest.mark.integration, pytest.mark.timeout(1200), pytest.mark.xdist_group("lost-and-refused")]

FAULTS = ("pod-lost", "admission-refused")


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, ClassRun]:
    """Each fault on its own simulated cluster, side by side (in processes)."""
    from .conftest import launch

    sims, futures = {}, {}
    ctx = multiprocessing.get_context("fork")
    try:
        with ProcessPoolExecutor(max_workers=2, mp_context=ctx) as pool:
            for fault in FAULTS:
                tmp = tmp_path_factory.mktemp(fault)
                sims[fault] = sim = launch(tmp / "sim", faults=fault)
                futures[fault] = pool.submit(run_class, congestion_plan(tmp, sim), "queue_congestion",
                                             f"ends__{fault}")
            return {fault: f.result() for fault, f in futures.items()}
    finally:
        for sim in sims.values():
            sim.stop()


def check_reason(run: ClassRun, check_id: str) -> str:
    import json

    summary = json.loads((run.run_dir / "validation" / "summary.json").read_text())
    return next(c["reason"] for s in summary["suites"] for c in s["checks"] if c["check_id"] == check_id)


def rows_of(run: ClassRun) -> list[dict]:
    return pq.read_table(run.run_dir / "tables" / "workload_runs.parquet").to_pylist()


@pytest.mark.parametrize("fault", FAULTS)
def test_every_item_is_judged_and_nothing_waits_for_a_pod_nobody_will_create(runs, fault):
    run = runs[fault]
    assert not run.errors, run.errors
    end = run.file("observer_end", {})
    assert end["open_at_deadline"] == [], f"the observer ended at its deadline waiting for {end}"
    observed = run.steps["observe_services"]
    assert observed["complete"] is True, observed
    assert observed["wave"] in ("every wave item has its outcome", "the observer ended"), observed
    rows = rows_of(run)
    assert len({r["item"] for r in rows}) >= run.summary["expected"], "every item has its attempts' rows"
    assert "pending" not in {r["outcome"] for r in rows}, [(r["pod"], r["outcome"]) for r in rows]


def test_a_pod_lost_without_a_record_fails_tr01_and_its_task_says_what_the_evidence_says(runs):
    run = runs["pod-lost"]
    rows = rows_of(run)
    [lost] = [r for r in rows if r["outcome"] == "lost"]
    assert run.verdicts["TR-01"] == "fail", run.verdicts
    assert f"{lost['namespace']}/{lost['pod']}: lost" in check_reason(run, "TR-01"), "the failure names the pod"
    assert lost["task_outcome"] == "lost" and lost["final_attempt"], lost
    [decision] = [d for d in run.decisions if (d.namespace, d.pod) == (lost["namespace"], lost["pod"])]
    said = task_message(decision)
    assert said.startswith(f"lost: pod {lost['namespace']}/{lost['pod']} "), said
    assert lost["outcome_message"] and lost["outcome_message"] in said, (said, lost)
    assert not [r for r in rows if r["item"] == lost["item"] and r["attempt"] > lost["attempt"]], \
        "a lost attempt is not followed by another"


def test_a_refused_creation_ends_its_item_with_the_platforms_message(runs):
    run = runs["admission-refused"]
    rows = rows_of(run)
    [refused] = [d for d in run.decisions if d.pod is None]
    assert (refused.outcome.value, refused.next.value) == ("rejected", "none")
    said = task_message(refused)
    assert f'admission webhook "{WEBHOOK}" denied the request' in said and "HTTP 403" in said, said
    [row] = [r for r in rows if r["item"] == refused.item]
    assert row["outcome"] == "rejected" and row["task_outcome"] == "rejected", row
    assert f'admission webhook "{WEBHOOK}" denied the request' in row["outcome_message"], row
    assert run.verdicts["TR-01"] == "pass", "a refusal is the platform's own record"
