"""The queue-congestion class's evidence tables, one typed row model each: the only place their columns are
written. The evidence writer takes each table's schema from its model (``evidence.tables.TABLES``), the
collector builds its rows as these models, and the suites under ``expectations/queue_congestion.*`` and the
report read the same column names.

This module imports nothing of the package: it sits in the evidence layer, beneath everything that writes or
reads these tables (``tests/unit/structure/test_import_graph.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass
class ExplanationRow:
    """One workload of the wave (an ``explanations`` row): the platform's explanation of its wait beside the
    pipeline's own reconstruction of the bottleneck.

    ``explained`` is the one judgement of whether the platform explained the wait (``pipeline.readable``
    ``explains``, made by this folder's ``reconstruct``), under the one name the reconstruction's row, this
    table, QC-05's suite and the report all read: true or false for a wait that needed an explanation and was
    seen, empty otherwise (no wait to explain, or nothing saw it: ``observed`` false)."""

    pod: str
    namespace: str | None = None
    tenant: str | None = None
    wait_seconds: float | None = None
    needs_explanation: bool | None = None  # it waited longer than a scheduling pass after its release, or never ran
    platform_reason: str | None = None
    platform_message: str | None = None
    reconstructed_bottleneck: str | None = None
    ahead_count: int | None = None
    explained: bool | None = None
    explained_from: str | None = None  # snapshots, or events when no snapshot saw the wait
    observed: bool | None = None  # False: it needed an explanation but no snapshot or event saw it (not judged)
    eta_offered: bool | None = None  # the platform offered an expected start (an ETA) for this workload
    eta_error_seconds: float | None = None
    expected_wait_seconds: float | None = None  # the pipeline's estimate: queue at release, plan's durations
    priority_class: str | None = None
    gpus: int | None = None


@dataclass
class GangPlacement:
    """One gang of the wave (a ``gang_placements`` row): how long it was partly placed, how long until whole,
    whether it stalled."""

    gang: str
    tenant: str | None = None
    namespace: str | None = None
    pool: str | None = None
    priority_class: str | None = None
    adapter: str | None = None                  # the plan's scheduler adapter (kube-scheduler has no gangs)
    replicas: int | None = None
    min_available: int | None = None
    gpus_per_pod: int | None = None
    attempts: int | None = None
    released_at: datetime | None = None
    first_placed_at: datetime | None = None
    full_at: datetime | None = None             # first moment min_available replicas held GPUs together
    all_placed_at: datetime | None = None       # every replica had got its GPUs
    fully_placed: bool | None = None
    time_to_full_seconds: float | None = None   # release -> all placed (-> end of observation if never)
    partial_seconds: float | None = None        # some replicas held GPUs, fewer than min_available, one waited
    partial_while_others_waited_seconds: float | None = None
    idle_gpu_seconds: float | None = None       # GPUs held by the partly placed replicas meanwhile
    longest_stall_seconds: float | None = None  # partly placed while nothing in the pool was placed or ended


TABLES: dict[str, type] = {"explanations": ExplanationRow, "gang_placements": GangPlacement}
