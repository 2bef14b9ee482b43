"""Derived tables: priority order and each tenant's share."""

import pandas as pd

from gpupoc.validation import synthetic as syn
from gpupoc.validation.derived import priority_order
from gpupoc.evidence.reader import RunEvidence


def _run(tmp_path, runs):
    return RunEvidence.open(syn.write_run(tmp_path, "queue_congestion", "r1", {"workload_runs": runs}))


def test_priority_order_is_zero_when_priority_is_honoured(tmp_path):
    po = priority_order(_run(tmp_path, syn.workload_runs()))
    assert po["overtaken_by_lower"].sum() == 0


def test_priority_order_counts_lower_priority_workloads_scheduled_first(tmp_path):
    runs = syn.workload_runs(6)
    runs["pool"] = "training"
    runs["gpus"] = 1
    # FIFO: schedule in submission order regardless of priority
    runs["scheduled_at"] = [pd.Timestamp(syn.T0) + pd.Timedelta(seconds=20 + 10 * i) for i in range(6)]
    runs["priority"] = [10, 10, 1000, 1000, 100, 1000]
    po = priority_order(_run(tmp_path, runs)).set_index("pod")
    assert po.loc["wave-2", "overtaken_by_lower"] == 2  # both low-priority wave-0 and wave-1 went first
    assert po.loc["wave-5", "overtaken_by_lower"] == 3  # wave-0, wave-1 and wave-4 (100) went first
    assert po.loc["wave-0", "overtaken_by_lower"] == 0


def test_tenant_share_is_counted_within_each_pool_two_or_more_tenants_competed_for(tmp_path):
    from gpupoc.validation.derived import tenant_share

    runs = syn.workload_runs(5)
    t0 = pd.Timestamp(syn.T0)
    runs["tenant"] = ["team-a", "team-a", "team-b", "team-c", "team-c"]
    runs["pool"] = ["training", "training", "training", "inference", "inference"]
    runs["gpus"] = [4, 4, 8, 1, 1]
    runs["started_at"] = [t0] * 5
    runs["finished_at"] = [t0 + pd.Timedelta(seconds=10)] * 5
    share = tenant_share(_run(tmp_path, runs))
    assert list(zip(share["pool"], share["tenant"], share["share"])) == [
        ("training", "team-a", 0.5), ("training", "team-b", 0.5)], "team-c alone in its pool competed with nobody"
    assert share["gpu_seconds"].tolist() == [80.0, 80.0]


def _fifo_across_tenants(tmp_path, adapter: str | None):
    runs = syn.workload_runs(6)
    runs["pool"] = "training"
    runs["gpus"] = 1
    runs["scheduled_at"] = [pd.Timestamp(syn.T0) + pd.Timedelta(seconds=20 + 10 * i) for i in range(6)]
    runs["priority"] = [10, 10, 1000, 1000, 100, 1000]
    tables = {"workload_runs": runs}
    if adapter:
        tables["platform_info"] = pd.DataFrame({"key": ["adapter"], "value": [adapter], "source": ["plan"]})
    return priority_order(RunEvidence.open(syn.write_run(tmp_path, "queue_congestion", "r1", tables)))


def test_under_a_queue_scheduler_priority_is_compared_inside_each_tenants_queue_only(tmp_path):
    tenants = syn.workload_runs(6)["tenant"].tolist()
    kube = _fifo_across_tenants(tmp_path / "kube", "kube-scheduler").set_index("pod")
    kueue = _fifo_across_tenants(tmp_path / "kueue", "kueue").set_index("pod")
    assert kube.loc["wave-5", "overtaken_by_lower"] == 3, "kube-scheduler orders the whole pool by priority"
    # wave-5 is overtaken only by the lower-priority workloads of its own tenant
    same = sum(1 for i in (0, 1, 4) if tenants[i] == tenants[5])
    assert kueue.loc["wave-5", "overtaken_by_lower"] == same < 3
    assert (kueue["overtaken_by_lower"] <= kube["overtaken_by_lower"]).all()


def test_under_a_queue_scheduler_only_a_later_arrival_of_lower_priority_overtakes(tmp_path):
    runs = syn.workload_runs(3)
    runs["tenant"], runs["pool"], runs["gpus"] = "team-a", "training", 1
    runs["priority"] = [10, 1000, 10]
    t0 = pd.Timestamp(syn.T0)
    # created: low-early at 0 s, high at 5 s, low-late at 10 s; one release at 20 s (the gate a queue scheduler
    # does not wait for); bound: both low ones before the high one
    runs["submitted_at"] = [t0, t0 + pd.Timedelta(seconds=5), t0 + pd.Timedelta(seconds=10)]
    runs["released_at"] = t0 + pd.Timedelta(seconds=20)
    runs["scheduled_at"] = [t0 + pd.Timedelta(seconds=s) for s in (21, 40, 22)]
    info = pd.DataFrame({"key": ["adapter"], "value": ["kai"], "source": ["plan"]})
    queue = priority_order(RunEvidence.open(syn.write_run(
        tmp_path / "q", "queue_congestion", "r1", {"workload_runs": runs, "platform_info": info}))).set_index("pod")
    kube = priority_order(RunEvidence.open(syn.write_run(
        tmp_path / "k", "queue_congestion", "r1", {"workload_runs": runs}))).set_index("pod")
    assert kube.loc["wave-1", "overtaken_by_lower"] == 2, "one release moment: both low ones overtook"
    assert queue.loc["wave-1", "overtaken_by_lower"] == 1, "only the low one created after the high one"


def test_an_attempt_that_ended_unscheduled_is_overtaken_only_while_it_waited(tmp_path):
    runs = syn.workload_runs(3)
    runs["tenant"], runs["pool"], runs["gpus"] = "team-a", "training", 1
    runs["priority"] = [1000, 10, 10]
    t0 = pd.Timestamp(syn.T0)
    runs["submitted_at"] = runs["released_at"] = t0
    # the high one is preempted while still queued at 30 s; one low one is placed before, one after that
    runs["scheduled_at"] = [pd.NaT, t0 + pd.Timedelta(seconds=20), t0 + pd.Timedelta(seconds=60)]
    runs["outcome"] = ["preempted", "succeeded", "succeeded"]
    runs["outcome_at"] = [t0 + pd.Timedelta(seconds=30), pd.NaT, pd.NaT]
    po = priority_order(_run(tmp_path, runs)).set_index("pod")
    assert po.loc["wave-0", "overtaken_by_lower"] == 1, "only the one placed while it still waited"


def _gang_and_backfill(tmp_path, adapter: str | None) -> pd.DataFrame:
    """A 4-pod gang of 1-GPU pods (priority 1000) waits for 4 free GPUs; meanwhile two 1-GPU pods of priority
    10, created a second after the gang's first pod, are placed in the 2 free GPUs; then a 4-GPU pod of
    priority 10 created later is placed before the gang."""
    runs = syn.workload_runs(7)
    runs["tenant"], runs["pool"], runs["gpus"] = "team-a", "training", [1, 1, 1, 1, 1, 1, 4]
    runs["priority"] = [1000] * 4 + [10, 10, 10]
    runs["gang"] = ["g0"] * 4 + [None] * 3
    runs["gang_min_available"] = [4] * 4 + [None] * 3
    t0 = pd.Timestamp(syn.T0)
    runs["submitted_at"] = [t0, t0, t0 + pd.Timedelta(seconds=2), t0 + pd.Timedelta(seconds=2),
                            t0 + pd.Timedelta(seconds=3), t0 + pd.Timedelta(seconds=3), t0 + pd.Timedelta(seconds=6)]
    runs["released_at"] = t0 + pd.Timedelta(seconds=10)
    runs["scheduled_at"] = [t0 + pd.Timedelta(seconds=90)] * 4 + [t0 + pd.Timedelta(seconds=s) for s in (30, 40, 60)]
    tables = {"workload_runs": runs}
    if adapter:
        tables["platform_info"] = pd.DataFrame({"key": ["adapter"], "value": [adapter], "source": ["plan"]})
    return priority_order(RunEvidence.open(syn.write_run(tmp_path, "queue_congestion", "r1", tables))).set_index("pod")


def test_a_gang_scheduler_backfilling_a_smaller_workload_beside_a_waiting_gang_is_no_inversion(tmp_path):
    volcano = _gang_and_backfill(tmp_path / "v", "volcano")
    kube = _gang_and_backfill(tmp_path / "k", None)
    # under a gang scheduler the gang asks 4 GPUs at once: the two 1-GPU pods are backfill, the later 4-GPU pod
    # (as large as the gang, arrived after its last pod) overtook it
    assert volcano.loc[[f"wave-{i}" for i in range(4)], "overtaken_by_lower"].tolist() == [1, 1, 1, 1]
    # kube-scheduler places each pod alone: every lower-priority pod of at least 1 GPU placed first overtook
    assert kube.loc[[f"wave-{i}" for i in range(4)], "overtaken_by_lower"].tolist() == [3, 3, 3, 3]


def test_priority_order_counts_the_same_when_a_pool_is_compared_a_block_of_rows_at_a_time(tmp_path, monkeypatch):
    import numpy as np

    from gpupoc.validation import derived

    rng = np.random.default_rng(7)
    runs = syn.workload_runs(40)
    t0 = pd.Timestamp(syn.T0)
    runs["pool"], runs["gpus"] = "training", rng.integers(1, 3, 40)
    runs["priority"] = rng.choice([10, 100, 1000], 40)
    runs["scheduled_at"] = [t0 + pd.Timedelta(seconds=int(s)) for s in rng.integers(11, 200, 40)]
    ev = _run(tmp_path, runs)
    whole = priority_order(ev)["overtaken_by_lower"].tolist()
    monkeypatch.setattr(derived, "PAIRS_PER_BLOCK", 7 * 40)  # blocks of 7 rows, the last one shorter
    assert priority_order(ev)["overtaken_by_lower"].tolist() == whole
    expected = [sum(1 for o in runs.itertuples() if o.priority < r.priority and o.gpus >= r.gpus
                    and o.scheduled_at < r.scheduled_at - pd.Timedelta(seconds=1) and o.scheduled_at >= r.released_at)
                for r in runs.itertuples()]
    assert whole == expected and sum(whole) > 0, "each workload counts the lower-priority ones placed while it waited"


def test_a_lower_priority_pod_released_first_and_bound_as_the_higher_one_arrives_was_in_flight(tmp_path):
    runs = syn.workload_runs(3)
    runs["tenant"], runs["pool"], runs["gpus"] = "team-a", "training", 1
    runs["priority"] = [10, 1000, 10]
    t0 = pd.Timestamp(syn.T0)
    # the low one's gate came off 0.2 s before the high one's; it was bound 1.1 s after the high one's release,
    # the high one waited 40 s; another low one released with the high one and bound 3 s after it overtook
    runs["submitted_at"] = t0
    runs["released_at"] = [t0 + pd.Timedelta(seconds=9.8), t0 + pd.Timedelta(seconds=10),
                           t0 + pd.Timedelta(seconds=9.9)]
    runs["scheduled_at"] = [t0 + pd.Timedelta(seconds=11.1), t0 + pd.Timedelta(seconds=50),
                            t0 + pd.Timedelta(seconds=13)]
    po = priority_order(_run(tmp_path, runs)).set_index("pod")
    assert po.loc["wave-1", "overtaken_by_lower"] == 1, "only the one bound well after the high one arrived"
