"""Timelines for the gang, interval and fair-share tests: seconds after T0."""

from __future__ import annotations

from datetime import timedelta

from gpupoc.pipeline.timelines import WorkloadTimeline

from .fake_api import T0


def at(s: float | None):
    return None if s is None else T0 + timedelta(seconds=s)


def tl(pod: str, *, tenant: str = "team-a", gpus: int = 1, ready: float | None = 0, placed: float | None = None,
       ended: float | None = None, gang: str | None = None, size: int = 1, pool: str = "training",
       item: str | None = None) -> WorkloadTimeline:
    return WorkloadTimeline(workload_key=item or pod, pod=pod, namespace=tenant, tenant=tenant, pool=pool,
                            priority_class="gpupoc-normal", priority=1000, gpus=gpus, released_at=at(ready),
                            scheduled_at=at(placed), finished_at=at(ended), gang=gang, gang_size=size)
