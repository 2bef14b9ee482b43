"""The utilization class's evidence table, one typed row model: the only place its columns are named. The
evidence writer takes the table's schema from it (``evidence.tables.TABLES``); the collector's aggregate
(``samples.py`` ``aggregate_utilization_samples``) has its columns, and the suite
``expectations/utilization.utilization.json`` and the report read the same names. The per-slice table
(``vgpu_utilization``) is with the other shared-GPU tables in ``evidence/sharing_tables.py``.

This module imports nothing of the package: it sits in the evidence layer, beneath everything that writes or
reads these tables (``tests/unit/structure/test_import_graph.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime


@dataclass
class UtilizationRow:
    """GPU use of one pod on one GPU in one time bucket, beside what was allocated."""

    bucket: datetime
    namespace: str | None = None
    pod: str | None = None
    tenant: str | None = None
    task_type: str | None = None
    pool: str | None = None
    node: str | None = None
    gpu_uuid: str | None = None
    util_avg: float | None = None
    util_p95: float | None = None
    mem_mib_avg: float | None = None
    allocated_gpu_hours: float | None = None
    used_gpu_hours: float | None = None
    samples: int | None = None
    serving: bool | None = None          # the pod is a replica of one of the class's online services


TABLES: dict[str, type] = {"utilization": UtilizationRow}
