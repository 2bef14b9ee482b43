"""The wave's typed rows: an observation keeps what the scheduler's objects said through its file."""

from __future__ import annotations

from datetime import datetime, timezone

from gpupoc.pipeline.timelines import Observation

T0 = datetime(2026, 3, 2, 9, 0, 0, tzinfo=timezone.utc)
QUOTA = ("Pending", "couldn't assign flavors to pod set main: insufficient unused quota for nvidia.com/gpu",
         "Workload team-a/w condition QuotaReserved")


def test_an_observation_keeps_every_text_of_the_schedulers_objects_in_order_through_its_file():
    gang = ("NotEnoughTasks", "Not enough valid tasks for gang-scheduling, valid: 1, min: 4", "PodGroup team-a/g")
    o = Observation(taken_at=T0, pod="p", namespace="team-a", scheduler_said=(QUOTA, gang))
    back = Observation.from_dict(o.to_dict())
    assert back == o and back.scheduler_said == (QUOTA, gang)


def test_an_observation_written_with_one_scheduler_text_reads_back_as_that_text():
    old = {"taken_at": "2026-03-02T09:00:00Z", "pod": "p", "namespace": "team-a", "scheduler_reason": QUOTA[0],
           "scheduler_message": QUOTA[1], "scheduler_source": QUOTA[2]}
    assert Observation.from_dict(old).scheduler_said == (QUOTA,)
    assert Observation.from_dict({**old, "scheduler_message": None}).scheduler_said == ()
