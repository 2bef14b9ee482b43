"""The generator on its distributions, with fixed seeds.

Tolerances, on 5,000 jobs: medians within 10 % (GPU medians exact); completed/cancelled/failed shares within
2 percentage points; means within 3 standard errors of the fitted distribution (heavy tails move a sample
mean far more than a median: for Helios' run times one standard error is 45 % of the mean; the fitted
means themselves are exact, see test_fit.py).
"""

from __future__ import annotations

import math
from collections import Counter

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.history.fit import LogNormal, PowersOfTwo
from gpupoc.history.model import JobState
from gpupoc.history.stats import figures
from gpupoc.history.synth import SynthParams, command, load_traces, synthesize


@pytest.fixture(scope="module", params=["kalos", "seren", "helios"])
def like(request):
    return request.param


@pytest.fixture(scope="module")
def big(like):
    return synthesize(SynthParams(like=like, jobs=5000, seed=2024))


def test_medians_follow_the_published_figures(like, big):
    pub = load_traces()[like]
    got = figures(big.records)
    assert got.gpus_median == pub["gpus"]["median"]
    assert got.run_median == pytest.approx(pub["run_seconds"]["median"], rel=0.10)
    if pub["queue_seconds"]["median"] == 0:
        assert got.queue_median == 0
    else:
        assert got.queue_median == pytest.approx(pub["queue_seconds"]["median"], rel=0.10, abs=0.5)


def test_state_shares_follow_the_published_shares(like, big):
    pub = load_traces()[like]["states"]
    total = sum(pub.values())
    got = figures(big.records)
    for state in ("completed", "cancelled", "failed"):
        assert getattr(got, state) == pytest.approx(pub[state] / total, abs=0.02), state


def test_means_of_gpus_and_run_time_follow_the_published_means(like, big):
    pub = load_traces()[like]
    got = figures(big.records)
    n = len(big.records)
    gpus = PowersOfTwo.fit(pub["gpus"]["mean"], pub["gpus"]["max"], 0.6)
    gpus_sd = math.sqrt(sum(v * v * p for v, p in zip(gpus.values, gpus.probs)) - gpus.mean ** 2)
    assert abs(got.gpus_mean - pub["gpus"]["mean"]) < 3 * gpus_sd / math.sqrt(n)
    run = LogNormal.from_median_mean(pub["run_seconds"]["median"], pub["run_seconds"]["mean"])
    run_sd = run.mean * math.sqrt(math.exp(run.sigma ** 2) - 1)
    assert abs(got.run_mean - pub["run_seconds"]["mean"]) < 3 * run_sd / math.sqrt(n)
    assert got.gpus_max <= pub["gpus"]["max"]


def test_the_same_seed_gives_the_same_history_and_another_seed_another():
    a = synthesize(SynthParams(like="kalos", jobs=200, seed=1))
    assert a.records == synthesize(SynthParams(like="kalos", jobs=200, seed=1)).records
    assert a.records != synthesize(SynthParams(like="kalos", jobs=200, seed=2)).records


def test_jobs_are_consistent_and_in_submission_order(big):
    recs = big.records
    assert [r.submit_time for r in recs] == sorted(r.submit_time for r in recs)
    for r in recs:
        assert r.start_time == r.submit_time + (r.start_time - r.submit_time)
        assert (r.start_time - r.submit_time).total_seconds() == r.queue_s
        assert (r.end_time - r.start_time).total_seconds() == r.duration_s >= 1
        assert r.node_num == -(-r.gpu_num // 8) and r.gpu_num & (r.gpu_num - 1) == 0  # powers of two


def test_users_have_skewed_shares(big):
    counts = sorted((sum(r.user == u for r in big.records) for u in {r.user for r in big.records}), reverse=True)
    assert counts[0] > 5 * counts[-1] and counts[0] / len(big.records) > 0.1


def test_arrivals_are_burstier_than_poisson(big):
    t0 = big.records[0].submit_time
    minutes = Counter(int((r.submit_time - t0).total_seconds() // 60) for r in big.records)
    counts = [minutes.get(m, 0) for m in range(max(minutes) + 1)]
    mean = sum(counts) / len(counts)
    dispersion = sum((c - mean) ** 2 for c in counts) / len(counts) / mean
    assert dispersion > 2.0  # a Poisson process gives 1 (Helios: 1.7 with its daily cycle); sessions give more


def test_a_cap_bounds_the_gpus_and_is_stated(tmp_path):
    h = synthesize(SynthParams(like="kalos", jobs=2000, seed=3, max_gpus=24))
    assert max(r.gpu_num for r in h.records) == 16
    assert any("GPUs capped at 24 (published maximum 1024)" in a for a in h.metadata["assumptions"])
    assert h.metadata["fit"]["gpus"]["values"] == [1, 2, 4, 8, 16]


def test_the_metadata_labels_it_synthetic_with_its_generator_seed_source_and_licence():
    h = synthesize(SynthParams(like="helios", jobs=100, seed=5))
    m = h.metadata
    assert m["synthetic"] is True and m["seed"] == 5 and m["licence"] == "CC BY 4.0"
    assert m["command"] == "gpupoc history synth --like helios --jobs 100 --seed 5"
    assert "SenseTime" in m["figures_source"] and "cluster_summary.csv" in m["figures_source"]
    assert m["fit"]["run_seconds"]["distribution"] == "lognormal" and m["format"] == "helios"
    assert len({r.vc for r in h.records}) > 1  # Helios-like histories have virtual clusters


def test_the_command_repeats_only_the_parameters_that_differ_from_the_defaults():
    assert command(SynthParams(like="kalos", jobs=300, seed=7, max_gpus=24, users=10)) == \
        "gpupoc history synth --like kalos --jobs 300 --seed 7 --max-gpus 24 --users 10"


def test_bad_parameters_are_listed_with_the_option_to_fix():
    with pytest.raises(ConfigError) as exc:
        synthesize(SynthParams(like="kalos", jobs=0, seed=1, single_gpu_share=0.3))
    assert exc.value.errors == ["--jobs: expected a positive integer, got 0",
                                "--single-gpu-share: expected a share in [0.5, 1) (the median is 1 GPU), got 0.3"]
    with pytest.raises(ConfigError, match="--like: unknown trace 'philly'; one of kalos, seren, helios"):
        synthesize(SynthParams(like="philly", jobs=10, seed=1))


def test_every_state_is_one_of_the_published_three():
    h = synthesize(SynthParams(like="seren", jobs=300, seed=9))
    assert {r.state for r in h.records} == {JobState.COMPLETED, JobState.CANCELLED, JobState.FAILED}
