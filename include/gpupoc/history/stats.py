"""Summary figures of a history, in the terms of the published trace summaries (GPU jobs only)."""

from __future__ import annotations

from dataclasses import asdict, dataclass
from statistics import mean, median

from gpupoc.history.model import JobRecord, JobState

# As in the Acme analysis, TIMEOUT and NODE_FAIL count as failed.
_FAILED = (JobState.FAILED, JobState.TIMEOUT, JobState.NODE_FAIL)


@dataclass(frozen=True)
class Figures:
    gpu_jobs: int
    gpus_median: float
    gpus_mean: float
    gpus_max: int
    run_median: float
    run_mean: float
    queue_median: float
    queue_mean: float
    completed: float
    cancelled: float
    failed: float

    def to_dict(self) -> dict:
        return {k: round(v, 4) if isinstance(v, float) else v for k, v in asdict(self).items()}


def figures(records: list[JobRecord]) -> Figures:
    """Medians, means and state shares of the GPU jobs of ``records`` (run and queue over known values)."""
    jobs = [r for r in records if r.gpu_num > 0]
    if not jobs:
        raise ValueError("no GPU jobs in the history")
    runs = [r.duration_s for r in jobs if r.duration_s is not None] or [0.0]
    waits = [r.queue_s for r in jobs if r.queue_s is not None] or [0.0]
    n = len(jobs)
    return Figures(
        gpu_jobs=n,
        gpus_median=float(median(r.gpu_num for r in jobs)),
        gpus_mean=mean(r.gpu_num for r in jobs),
        gpus_max=max(r.gpu_num for r in jobs),
        run_median=float(median(runs)), run_mean=mean(runs),
        queue_median=float(median(waits)), queue_mean=mean(waits),
        completed=sum(r.state is JobState.COMPLETED for r in jobs) / n,
        cancelled=sum(r.state is JobState.CANCELLED for r in jobs) / n,
        failed=sum(r.state in _FAILED for r in jobs) / n,
    )


def comparison(reached: dict, published: dict) -> list[str]:
    """Lines setting a history's figures (``Figures.to_dict()``) beside the published ones (``traces.yaml``)."""
    lines = []
    for label, key, pub in (("GPUs per job", "gpus", published["gpus"]),
                            ("run time (s)", "run", published["run_seconds"]),
                            ("queue time (s)", "queue", published["queue_seconds"])):
        lines.append(f"  {label}: median {reached[f'{key}_median']:g} (published {pub['median']:g}), "
                     f"mean {reached[f'{key}_mean']:.1f} (published {pub['mean']:g})")
    states = published["states"]
    lines.append("  states: " + ", ".join(f"{s} {reached[s]:.1%} (published {states[s]:.1%})"
                                          for s in ("completed", "cancelled", "failed")))
    return lines
