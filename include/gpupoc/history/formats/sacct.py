"""Slurm accounting: the output of

    sacct --allusers --allocations --parsable2 \\
          --format=JobID,User,Account,Partition,AllocTRES,NNodes,State,Submit,Start,End,Elapsed[,ExitCode]

``|``-separated with a header row. GPUs come from ``AllocTRES`` (``billing=8,cpu=8,gres/gpu=2,mem=64G,node=1``;
typed GRES such as ``gres/gpu:a100=2`` count when there is no plain ``gres/gpu``). Times are the cluster's
local time without an offset (``2024-03-01T10:00:00``): they are read in ``--timezone``; ``Unknown`` and
``None`` mean the event never happened. ``Elapsed`` is ``[D-]HH:MM:SS`` (``1-02:03:04``). ``State`` may carry
who cancelled (``CANCELLED by 1234``); the table keeps it in ``state_raw``. Job steps (``1234.batch``,
``1234.0``) are counted and left out: ``--allocations`` (``-X``) leaves them out at the source.
"""

from __future__ import annotations

from gpupoc.history.formats.engine import Column, SourceFormat
from gpupoc.history.formats.values import (
    INT32_MAX,
    ValueProblem,
    is_null,
    parse_count,
    parse_exit_code,
    parse_seconds,
    parse_text,
    parse_time,
    whole_number,
)

_TRES_EXAMPLE = "billing=8,cpu=8,gres/gpu=2,mem=64G,node=1"


def tres(text: str) -> dict[str, str]:
    """``cpu=8,gres/gpu=2`` -> {"cpu": "8", "gres/gpu": "2"}; an empty AllocTRES (never allocated) -> {}."""
    if is_null(text):
        return {}
    out = {}
    for part in text.strip().split(","):
        key, sep, value = part.partition("=")
        if not sep or not key.strip():
            raise ValueProblem(f"expected key=value pairs such as {_TRES_EXAMPLE}, got {text!r}",
                               "export AllocTRES unchanged from sacct")
        out[key.strip()] = value.strip()
    return out


def _count(key: str, value: str, text: str) -> int:
    """A TRES count: a whole number from 0 to the table's int32 limit."""
    n = whole_number(value)
    if n is None or n < 0:
        raise ValueProblem(f"{key} count {value!r} is not a whole number >= 0 (in {text!r})",
                           f"expected e.g. {_TRES_EXAMPLE}")
    return _in_range(key, n, text)


def _in_range(key: str, n: int, text: str) -> int:
    if n > INT32_MAX:
        raise ValueProblem(f"{key} count {n} is out of range (at most {INT32_MAX}, in {text!r})",
                           "export AllocTRES unchanged from sacct; a number this large is a corrupted cell")
    return n


def gpus_of_tres(text: str) -> int:
    """GPUs allocated: ``gres/gpu``, else the sum of typed ``gres/gpu:<type>`` entries, else 0."""
    pairs = tres(text)
    if "gres/gpu" in pairs:
        return _count("gres/gpu", pairs["gres/gpu"], text)
    typed = sum(_count(k, v, text) for k, v in pairs.items() if k.startswith("gres/gpu:"))
    return _in_range("gres/gpu:*", typed, text)


def cpus_of_tres(text: str) -> int | None:
    pairs = tres(text)
    return _count("cpu", pairs["cpu"], text) if "cpu" in pairs else None


def job_step(values: dict[str, str]) -> str | None:
    """A row of a job step rather than a job (``1234.batch``, ``1234.extern``, ``1234.0``)."""
    return "job steps (sacct --allocations leaves them out)" if "." in values.get("JobID", "") else None


COLUMNS = (
    Column("job_id", "JobID", parse_text),
    Column("user", "User", parse_text),
    Column("vc", "Account", parse_text),
    Column("partition", "Partition", parse_text),
    Column("gpu_num", "AllocTRES", gpus_of_tres),
    Column("cpu_num", "AllocTRES", cpus_of_tres),
    Column("node_num", "NNodes", parse_count),
    Column("state_raw", "State", parse_text),
    Column("submit_time", "Submit", parse_time),
    Column("start_time", "Start", parse_time),
    Column("end_time", "End", parse_time),
    Column("duration_s", "Elapsed", parse_seconds),
    Column("exit_code", "ExitCode", parse_exit_code, required=False),
)

FORMAT = SourceFormat(
    "sacct", COLUMNS, delimiter="|", leave_out=job_step,
    header_fix="run sacct --parsable2 --format=JobID,User,Account,Partition,AllocTRES,NNodes,State,Submit,Start,"
               "End,Elapsed without --noheader",
)
