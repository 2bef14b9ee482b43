"""Evidence: typed tables (parquet) per run under a run-scoped path, a manifest, and a scrubber for secrets."""

from gpupoc.evidence.reader import (EvidenceUnreadable, Problem, ProblemKind, RunEvidence, TableStatus,
                                   find_runs)
from gpupoc.evidence.schema import EvidenceSchemaError, schema, to_arrow
from gpupoc.evidence.scrub import scrub, scrub_text
from gpupoc.evidence.tables import (
    TABLES,
    PlatformInfo,
    QueueSnapshot,
    WorkloadRun,
    platform_rows,
)
from gpupoc.evidence.writer import EvidenceWriter, TableRecord, run_dir_for, safe_segment

__all__ = [
    "TABLES", "EvidenceSchemaError",
    "EvidenceWriter", "PlatformInfo", "QueueSnapshot",
    "EvidenceUnreadable", "Problem", "ProblemKind", "RunEvidence", "TableRecord", "TableStatus",
    "WorkloadRun", "find_runs", "platform_rows", "run_dir_for", "safe_segment", "schema", "scrub",
    "scrub_text", "to_arrow",
]
