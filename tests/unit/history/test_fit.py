"""The fitted distributions have the published medians and means by construction."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gpupoc.history.fit import LogNormal, PowersOfTwo, zipf_weights


def test_a_lognormal_from_median_and_mean_has_that_median_and_mean():
    d = LogNormal.from_median_mean(124.0, 1259.689)
    assert d.mu == pytest.approx(math.log(124.0))
    assert d.sigma == pytest.approx(math.sqrt(2 * math.log(1259.689 / 124.0)))
    assert d.median == pytest.approx(124.0) and d.mean == pytest.approx(1259.689)


def test_a_zero_median_stands_in_as_a_quarter_second():
    d = LogNormal.from_median_mean(0.0, 862.047)
    assert d.median == pytest.approx(0.25) and d.mean == pytest.approx(862.047)


def test_a_mean_below_the_median_cannot_be_fitted():
    with pytest.raises(ValueError, match="needs mean >= median"):
        LogNormal.from_median_mean(100.0, 50.0)


def test_the_cap_bounds_every_sample():
    d = LogNormal.from_median_mean(124.0, 1259.689, cap=1000.0)
    assert d.sample(np.random.default_rng(0), 10_000).max() == 1000.0


def test_powers_of_two_reach_the_published_mean_with_median_one():
    d = PowersOfTwo.fit(26.77, 1024, 0.6)
    assert d.values == (1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024)
    assert sum(d.probs) == pytest.approx(1.0) and d.probs[0] == pytest.approx(0.6)
    assert d.mean == pytest.approx(26.77, rel=1e-6) and d.median == 1
    assert all(a > b for a, b in zip(d.probs[1:], d.probs[2:]))  # fewer jobs as they grow (r < 1 for Kalos)


def test_a_cap_keeps_the_shape_below_it_and_renormalises():
    d = PowersOfTwo.fit(26.77, 1024, 0.6)
    capped = d.capped(24)
    assert capped.values == (1, 2, 4, 8, 16)
    assert sum(capped.probs) == pytest.approx(1.0)
    assert capped.probs[1] / capped.probs[2] == pytest.approx(d.probs[1] / d.probs[2])
    assert capped.mean < d.mean and capped.median == 1
    assert d.capped(None) is d and d.capped(2048) is d


def test_an_unreachable_mean_is_refused():
    with pytest.raises(ValueError, match="cannot reach a mean of 2000 GPUs"):
        PowersOfTwo.fit(2000, 1024, 0.6)
    with pytest.raises(ValueError, match="single_share must be in"):
        PowersOfTwo.fit(5, 1024, 0.4)


def test_zipf_weights_fall_with_rank_and_sum_to_one():
    w = zipf_weights(4, 1.0)
    assert w.sum() == pytest.approx(1.0) and w[0] / w[3] == pytest.approx(4.0)
