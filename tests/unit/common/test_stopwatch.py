import pytest

from gpupoc.common.stopwatch import Stopwatch


def _clock(ticks):
    it = iter(ticks)
    return lambda: next(it)


def test_each_stage_is_timed_in_order_and_a_stage_timed_twice_adds_up():
    watch = Stopwatch("collect", clock=_clock([0.0, 1.5, 2.0, 5.0, 6.0, 6.25]))
    with watch.stage("list"):
        pass
    with watch.stage("gather"):
        pass
    with watch.stage("list"):
        pass
    assert watch.as_dict() == {"task": "collect", "stages": {"list": 1.75, "gather": 3.0}, "total": 4.75}


def test_a_stage_that_raises_is_still_timed():
    watch = Stopwatch("collect", clock=_clock([10.0, 12.0]))
    with pytest.raises(ValueError):
        with watch.stage("resume"):
            raise ValueError("cut")
    assert watch.as_dict()["stages"] == {"resume": 2.0}
