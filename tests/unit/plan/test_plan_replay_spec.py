"""The ``replay:`` section's own rules: one selection, columns only (and always) for csv, known formats."""

from __future__ import annotations

import pytest
from pydantic import ValidationError

from gpupoc.history.formats import FORMATS
from gpupoc.plan.replay_spec import REPLAY_FORMATS, ReplaySpec

BASE = {"file": "h.csv", "format": "acme", "compress": 24, "template": "v-train-1g"}


def test_exactly_one_of_first_and_window_is_required():
    for extra in ({}, {"first": 5, "window": "2023-05-01T00:00/2023-05-02T00:00"}):
        with pytest.raises(ValidationError, match="exactly one of first"):
            ReplaySpec(**BASE, **extra)
    assert ReplaySpec(**BASE, first=5).first == 5


def test_csv_needs_columns_and_other_formats_refuse_them():
    with pytest.raises(ValidationError, match="format csv needs columns"):
        ReplaySpec(**{**BASE, "format": "csv"}, first=5)
    with pytest.raises(ValidationError, match="columns only apply to format csv"):
        ReplaySpec(**BASE, first=5, columns={"job_id": "JobId"})
    spec = ReplaySpec(**{**BASE, "format": "csv"}, first=5, columns={"job_id": "JobId", "gpu_num": "GPUs"})
    assert spec.columns_text == "job_id=JobId,gpu_num=GPUs"


def test_the_formats_are_the_importers_and_the_imported_table():
    assert REPLAY_FORMATS == (*FORMATS, "parquet")
    with pytest.raises(ValidationError):
        ReplaySpec(**{**BASE, "format": "slurm"}, first=5)


def test_compression_and_the_what_if_factor_must_be_positive():
    with pytest.raises(ValidationError, match="positive"):
        ReplaySpec(**{**BASE, "compress": 0}, first=5)
    with pytest.raises(ValidationError, match="positive"):
        ReplaySpec(**BASE, first=5, what_if_factor=-1)
