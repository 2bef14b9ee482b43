from collections import Counter

from gpupoc.demo.progress import ProgressTracker, elapsed, normalise_states, progress_line, task_counts


def test_elapsed_shows_minutes_and_seconds_then_hours():
    assert elapsed(0) == "0:00"
    assert elapsed(7.9) == "0:07"
    assert elapsed(185) == "3:05"
    assert elapsed(3723) == "1:02:03"
    assert elapsed(-3) == "0:00"


def test_task_counts_follow_the_reading_order_and_skip_zero_counts():
    counts = {"failed": 1, "deferred": 8, "success": 5, "running": 0, "queued": 2}
    assert task_counts(counts) == "success 5, deferred 8, queued 2, failed 1"


def test_unknown_states_come_last_sorted_and_empty_counts_show_a_dash():
    assert task_counts({"zeta": 1, "success": 1, "alpha": 2}) == "success 1, alpha 2, zeta 1"
    assert task_counts({}) == "-"


def test_states_the_api_leaves_empty_count_as_none():
    tis = [{"task_id": "a", "state": s} for s in (None, "success", "", "success", "deferred")]
    assert normalise_states(tis) == Counter({"none": 2, "success": 2, "deferred": 1})


def test_a_rescheduling_sensor_counts_as_waiting_whatever_step_of_its_poke_it_is_in():
    for state in ("up_for_reschedule", "scheduled", "queued", "running"):
        tis = [{"task_id": "cluster_acquired", "state": state}, {"task_id": "observe", "state": state}]
        assert normalise_states(tis) == Counter({"waiting": 1, state: 1})
    assert normalise_states([{"task_id": "wave_released", "state": "success"}]) == Counter({"success": 1})


def test_progress_line_names_dag_state_counts_and_elapsed():
    line = progress_line(65, "poc_utilization", "running", {"success": 3, "running": 1}, width=20)
    assert line == "[ 1:05] poc_utilization      running  success 3, running 1"


def test_tracker_prints_once_per_change_of_state_or_counts():
    t = ProgressTracker(started=100.0, width=10)
    first = t.update(101.0, "poc_a", "queued", {"none": 4})
    assert first is not None and "queued" in first and "none 4" in first
    assert t.update(105.0, "poc_a", "queued", {"none": 4}) is None, "nothing changed: no line"
    assert t.update(106.0, "poc_a", "queued", {"none": 4, "success": 0}) is None, "zero counts are no change"
    line = t.update(110.0, "poc_a", "running", {"none": 3, "running": 1})
    assert line is not None and line.startswith("[ 0:10]") and "running 1, none 3" in line
    assert t.update(111.0, "poc_b", "queued", {"none": 4}) is not None, "each DAG is tracked on its own"
