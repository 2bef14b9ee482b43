"""A class's ``submission``: which path a wave takes, and the bulk release's rate."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gpupoc.plan.submission_spec import SubmissionSpec


def test_auto_goes_in_bulk_above_the_stated_size_only():
    spec = SubmissionSpec(bulk_above=200)
    assert not spec.bulk(200) and spec.bulk(201)
    assert SubmissionSpec(mode="bulk").bulk(1) and not SubmissionSpec(mode="operator").bulk(10_000)


def test_the_release_defaults_to_the_shards_rates_together():
    spec = SubmissionSpec(qps=50, burst=100)
    assert spec.release_rate(3) == (150, 300)
    assert spec.release_rate(0) == (50, 100), "no shard (an operator wave): one client's rate"


def test_a_stated_release_rate_wins_field_by_field():
    assert SubmissionSpec(qps=50, burst=100, release_qps=2000).release_rate(3) == (2000, 300)
    assert SubmissionSpec(qps=50, burst=100, release_burst=1000).release_rate(3) == (150, 1000)


@pytest.mark.parametrize("field, value", [("release_qps", 0), ("release_burst", 0), ("release_qps", -5)])
def test_a_release_rate_that_could_never_send_is_refused(field, value):
    with pytest.raises(ValidationError, match=field):
        SubmissionSpec(**{field: value})
