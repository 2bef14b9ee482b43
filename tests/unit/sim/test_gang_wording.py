"""Volcano's and KAI's gang texts, as their sources word them."""

from __future__ import annotations

from collections import Counter

from gpupoc.sim.controllers import gang_wording as T


def test_volcano_fit_error_lists_task_states_then_pending_reasons():
    text = T.volcano_fit_error(Counter({"Pending": 4, "Running": 0}), 4,
                               Counter({"Schedulable": 3, "Unschedulable": 1}))
    assert text == "pod group is not ready, 4 Pending, 4 minAvailable; Pending: 1 Unschedulable, 3 Schedulable"
    assert T.volcano_gang_unschedulable(1, 4, text).startswith("1/4 tasks in gang unschedulable: pod group is not")
    assert T.volcano_fit_error(Counter({"Running": 2}), 3, Counter()) == "pod group is not ready, 2 Running, 3 minAvailable"


def test_volcano_enqueue_and_validity_texts():
    assert T.volcano_queue_insufficient() == "queue resource quota insufficient: insufficient nvidia.com/gpu"
    assert T.volcano_cluster_overused() == "resource in cluster is overused: overused nvidia.com/gpu"
    assert T.format_resource_names("p", "v", []) == "p"
    assert T.volcano_not_enough_tasks(2, 3) == "Not enough valid tasks for gang-scheduling, valid: 2, min: 3"
    assert T.volcano_schedulable("ns", "p", "n1") == "Pod ns/p can possibly be assigned to n1"


def test_kai_job_message_joins_fit_errors_like_job_fit_errors_to_message():
    assert T.kai_job_message([("PodSchedulingErrors", "a")]) == "PodSchedulingErrors: a."
    two = T.kai_job_message([("OverLimit", "b"), ("PodSchedulingErrors", "a"), ("X", "a")])
    assert two == "Unable to schedule podgroup: 2 a. \nb."


def test_kai_queue_texts_humanize_numbers():
    assert T.humanize(8.0) == "8" and T.humanize(0.5) == "0.5" and T.humanize(0) == "0"
    assert T.kai_over_limit("q", 8, 6.5, 2) == ("q quota has reached the allowable limit of GPUs. Limit is 8 GPUs, "
                                                "currently 6.5 GPUs allocated and workload requested 2 GPUs")
    assert T.kai_gang_error(2, 4, "x") == ("Resources were found for 2 pods while 4 are required for gang scheduling. "
                                           "Additional pods cannot be scheduled due to: x")
    assert T.kai_reclaim("a", "p", "b", "pg") == "Pod a/p was preempted by workload b/pg."
