"""GPU samples aggregated per bucket keep their GPU-hours, and a short run's bucket shrinks so a view over time
has several buckets."""

from __future__ import annotations

import pandas as pd

from gpupoc.classes.utilization.samples import MIN_BUCKETS, aggregate_utilization_samples, effective_bucket_seconds
from gpupoc.validation import synthetic as syn


def test_aggregate_utilization_samples_keeps_gpu_hours():
    samples = syn.utilization_samples(gpus=2, days=0.5, step_seconds=60)
    out = aggregate_utilization_samples(samples, "1h")
    assert len(out) == 2 * 12
    assert abs(out["allocated_gpu_hours"].sum() - 2 * 12) < 1e-6
    expected_used = float((samples["util"].astype(float) / 100 * 60 / 3600).sum())
    assert abs(out["used_gpu_hours"].sum() - expected_used) < 1e-3
    assert (out["util_p95"] >= out["util_avg"]).all()


def test_the_bucket_shrinks_so_a_short_run_still_has_a_view_over_time():
    assert effective_bucket_seconds(3600, 60, 15) == 60, "a long run keeps the plan's bucket"
    assert effective_bucket_seconds(80, 60, 2) == 20 and 80 / 20 >= MIN_BUCKETS
    assert effective_bucket_seconds(10, 60, 5) == 5, "never below the sampling step"


def test_a_run_of_fifty_seconds_spans_several_buckets_wherever_the_minute_falls():
    planned_counts = []
    for offset in range(0, 60, 5):  # the run starts at any second of the clock's minute
        samples = syn.utilization_samples(gpus=1, days=50 / 86400, step_seconds=2)
        samples["ts"] = pd.to_datetime(samples["ts"], utc=True).dt.floor("min") + pd.Timedelta(seconds=offset) + \
            (pd.to_datetime(samples["ts"], utc=True) - pd.to_datetime(samples["ts"], utc=True).min())
        planned_counts.append(aggregate_utilization_samples(samples, "60s")["bucket"].nunique())
        seconds = effective_bucket_seconds(50, 60, 2)
        assert aggregate_utilization_samples(samples, f"{seconds}s")["bucket"].nunique() >= MIN_BUCKETS - 1
    assert min(planned_counts) == 1, "with the plan's minute a short run sometimes had a single bucket"
