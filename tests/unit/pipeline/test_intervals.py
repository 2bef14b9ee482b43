"""The wave cut into segments: who held GPUs and who waited between two moments of change."""

from gpupoc.pipeline.intervals import hold_interval, segments, wait_interval

from .timelines import at, tl


def test_an_attempt_waits_from_release_to_placement_and_holds_until_it_ends():
    t = tl("a", ready=0, placed=5, ended=9)
    assert wait_interval(t, at(20)) == (at(0), at(5)) and hold_interval(t, at(20)) == (at(5), at(9))


def test_an_attempt_never_placed_waits_until_it_ended_or_until_the_end():
    assert wait_interval(tl("a", ready=0, ended=7), at(20)) == (at(0), at(7))
    assert wait_interval(tl("b", ready=0), at(20)) == (at(0), at(20))
    assert hold_interval(tl("b", ready=0), at(20)) is None


def test_segments_say_who_held_and_who_waited_and_where_progress_happened():
    a, b = tl("a", ready=0, placed=0, ended=4), tl("b", ready=0, placed=4, ended=10)
    segs = segments([a, b], at(10))
    assert [(s.start, s.end) for s in segs] == [(at(0), at(4)), (at(4), at(10))]
    assert segs[0].holding == (a,) and segs[0].waiting == (b,)
    assert segs[1].holding == (b,) and segs[1].waiting == () and segs[1].progress_at_start
