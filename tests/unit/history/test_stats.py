"""Summary figures count GPU jobs only, with timeouts and node failures as failed."""

from __future__ import annotations

import pytest

from gpupoc.history.model import JobState
from gpupoc.history.stats import comparison, figures

from .conftest import job


def test_figures_of_gpu_jobs_with_failed_including_timeouts_and_node_failures():
    jobs = [job("a", gpus=1, run=10, wait=0), job("b", gpus=2, run=20, wait=4, state=JobState.TIMEOUT),
            job("c", gpus=8, run=30, wait=8, state=JobState.CANCELLED), job("d", gpus=0, run=999),
            job("e", gpus=1, run=40, wait=2, state=JobState.NODE_FAIL)]
    f = figures(jobs)
    assert f.gpu_jobs == 4 and f.gpus_median == 1.5 and f.gpus_mean == 3.0 and f.gpus_max == 8
    assert f.run_median == 25.0 and f.queue_mean == 3.5
    assert (f.completed, f.cancelled, f.failed) == (0.25, 0.25, 0.5)


def test_a_history_without_gpu_jobs_has_no_figures():
    with pytest.raises(ValueError, match="no GPU jobs"):
        figures([job(gpus=0)])


def test_the_comparison_sets_each_figure_beside_the_published_one():
    reached = figures([job("a", gpus=1, run=10, wait=1)]).to_dict()
    published = {"gpus": {"median": 1, "mean": 26.77}, "run_seconds": {"median": 124, "mean": 1259.689},
                 "queue_seconds": {"median": 17, "mean": 214.179},
                 "states": {"completed": 0.541, "cancelled": 0.062, "failed": 0.397}}
    lines = comparison(reached, published)
    assert lines[0] == "  GPUs per job: median 1 (published 1), mean 1.0 (published 26.77)"
    assert lines[-1] == ("  states: completed 100.0% (published 54.1%), cancelled 0.0% (published 6.2%), "
                         "failed 0.0% (published 39.7%)")
