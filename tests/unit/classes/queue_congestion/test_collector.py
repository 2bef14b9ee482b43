"""The queue-congestion collector's rows: the reconstruction's judgement goes into the table as it is."""

from __future__ import annotations

from dataclasses import asdict

from gpupoc.classes.queue_congestion.collector import explanation_row
from gpupoc.classes.queue_congestion.reconstruct import reconstruct

from tests.unit.classes.queue_congestion.test_reconstruct import ONE_NODE, ob, row, three_of_four, wl


def test_a_judged_wait_keeps_its_explained_and_its_figures_in_the_explanations_row():
    tl, obs = three_of_four()
    c = row(reconstruct(tl, obs, ONE_NODE), "c")
    r = explanation_row(c, 12.5)
    assert (r.explained, r.needs_explanation, r.observed, r.explained_from) == (True, True, True, "snapshots")
    assert (r.pod, r.reconstructed_bottleneck, r.ahead_count) == ("c", c.bottleneck, c.ahead_at_release)
    assert r.platform_message == c.platform_message and r.expected_wait_seconds == 12.5


def test_an_unexplained_wait_is_false_and_a_wait_nothing_saw_or_no_wait_is_empty():
    tl, obs = three_of_four(None)
    assert explanation_row(row(reconstruct(tl, obs, ONE_NODE), "c"), None).explained is False
    unseen = explanation_row(reconstruct([wl("a", scheduled=60)], [], ONE_NODE)[0], None)
    assert (unseen.explained, unseen.observed, unseen.needs_explanation) == (None, False, True)
    quick = explanation_row(reconstruct([wl("a")], [ob(0.5, "a")], ONE_NODE)[0], None)
    assert (quick.explained, quick.observed) == (None, None), asdict(quick)
