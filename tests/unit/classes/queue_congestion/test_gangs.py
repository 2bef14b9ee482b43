"""Gang atomicity from the replicas' timelines: partly placed time, idle GPUs, time until whole, stalls."""

from gpupoc.classes.queue_congestion.gangs import gang_rows

from tests.unit.pipeline.timelines import at, tl


def gang(name, placed, ended, size=None, gpus=2, ready=0):
    n = len(placed)
    return [tl(f"{name}-{i}", gpus=gpus, ready=ready, placed=p, ended=e, gang=name, size=size or n, item=f"{name}-{i}")
            for i, (p, e) in enumerate(zip(placed, ended))]


def test_a_gang_placed_whole_is_never_partly_placed():
    [row] = gang_rows(gang("g", [5, 5, 5], [15, 15, 15]) + [tl("other", ready=0, placed=15)], at(30))
    assert row.fully_placed and row.full_at == at(5) and row.time_to_full_seconds == 5
    assert (row.partial_seconds, row.partial_while_others_waited_seconds, row.idle_gpu_seconds) == (0, 0, 0)


def test_a_gang_bound_partly_holds_idle_gpus_while_another_workload_waits():
    waiting = tl("other", ready=0, placed=12, ended=20)
    [row] = gang_rows(gang("g", [2, 2, 10], [20, 20, 28]) + [waiting], at(30))
    assert row.partial_seconds == 8 and row.partial_while_others_waited_seconds == 8
    assert row.idle_gpu_seconds == 8 * 2 * 2  # two replicas of two GPUs each, for eight seconds
    assert row.time_to_full_seconds == 10 and row.full_at == at(10)


def test_replicas_that_end_at_different_moments_are_not_a_partial_placement():
    [row] = gang_rows(gang("g", [0, 0], [9, 10]), at(30))
    assert row.partial_seconds == 0


def test_a_gang_that_never_got_whole_counts_until_the_end_and_is_not_fully_placed():
    [row] = gang_rows(gang("g", [3, None], [None, None]), at(40))
    assert row.fully_placed is False and row.time_to_full_seconds == 40 and row.partial_seconds == 37


def test_a_partial_gang_while_nothing_progresses_is_a_stall_and_progress_resets_it():
    stuck = gang("g", [0, None], [None, None])
    other = [tl("x", ready=0, placed=0, ended=10)]
    [row] = gang_rows(stuck + other, at(100))
    assert row.longest_stall_seconds == 90  # from the last progress (x ended at 10) to the end


def test_min_available_below_replicas_is_whole_at_min_available():
    [row] = gang_rows(gang("g", [1, 1, None], [20, 20, None], size=2), at(30))
    assert row.fully_placed and row.partial_seconds == 0 and row.min_available == 2
