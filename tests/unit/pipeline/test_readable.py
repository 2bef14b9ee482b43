"""Which of a platform's texts explain a wait: placeholders never count, the scheduler's reasons do."""

import pytest

from gpupoc.pipeline.readable import classify_message, readable


@pytest.mark.parametrize("reason, message", [
    ("SchedulingGated", "Scheduling is blocked due to non-empty scheduling gates"),
    ("SchedulingGated", "anything the gate says"),
    ("Unschedulable", ""),
    ("Unschedulable", None),
    ("Unschedulable", "0/5 nodes are available."),
    ("Unschedulable", "0/5 nodes are unavailable."),
    ("Schedulable", "Pod team-nlp/qc-1 can possibly be assigned to training-node-2"),
    ("Undetermined", "all nodes are unavailable"),
    ("Unschedulable", "Unable to schedule podgroup"),
    ("Pending", "   "),
])
def test_gates_empty_texts_and_placeholders_explain_nothing(reason, message):
    assert readable(reason, message) is False


@pytest.mark.parametrize("reason, message", [
    ("Pending", "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor "
                "training, 4 more needed"),
    ("Unschedulable", "0/5 nodes are available: 2 node(s) didn't match Pod's node affinity/selector, 3 Insufficient "
                      "nvidia.com/gpu."),
    ("NotEnoughResources", "1/4 tasks in gang unschedulable: pod group is not ready, 4 Pending, 4 minAvailable"),
    ("Unschedulable", "queue resource quota insufficient: insufficient nvidia.com/gpu"),
    ("OverLimit", "team-serving quota has reached the allowable limit of GPUs. Limit is 8 GPUs, currently 8 GPUs "
                  "allocated and workload requested 1 GPUs"),
    ("Unschedulable", "PodSchedulingErrors: Resources were found for 3 pods while 4 are required for gang scheduling."),
])
def test_the_schedulers_own_reasons_explain(reason, message):
    assert readable(reason, message) is True


def test_platform_messages_are_classified_by_the_cause_they_name():
    failed = "0/1 nodes are available: 1 Insufficient nvidia.com/gpu. preemption: 0/1 nodes are available: " \
             "1 No preemption victims found for incoming pod.."
    assert classify_message(failed) == {"insufficient_gpus"}
    kueue = "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu in flavor training"
    assert "quota" in classify_message(kueue)
    assert classify_message('pods "x" is forbidden: exceeded quota: team-a-gpu') == {"quota"}
    assert classify_message("Scheduling is blocked due to non-empty scheduling gates") == {"gated"}
    assert "gang" in classify_message("1/4 tasks in gang unschedulable: pod group is not ready, 4 minAvailable")
    assert classify_message(None) == set()
