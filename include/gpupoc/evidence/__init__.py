"""Evidence: typed tables (parquet) per run under a run-scoped path, a manifest, and a scrubber for secrets."""

from gpupoc.evidence.reader import (EvidenceUnreadable, Problem, ProblemKind, RunEvidence, TableStatus,
                                   find_runs)
from gpupoc.evidence.schema import EvidenceSchemaError, schema, to_arrow
from gpupoc.evidence.scrub import scrub, scrub_text
from gpupoc.evidence.tables import (
    TABLES,
    AccessProbe,
    AlertRecord,
    ArtifactRecord,
    AuditMatch,
    FailureRecord,
    LedgerRow,
    PlatformInfo,
    QueueSnapshot,
    QuotaSample,
    UtilizationRow,
    WorkloadRun,
    platform_rows,
)
from gpupoc.evidence.writer import EvidenceWriter, TableRecord, run_dir_for, safe_segment

__all__ = [
    "TABLES", "AccessProbe", "AlertRecord", "ArtifactRecord", "AuditMatch", "EvidenceSchemaError",
    "EvidenceWriter", "FailureRecord", "LedgerRow", "PlatformInfo", "QueueSnapshot",
    "EvidenceUnreadable", "Problem", "ProblemKind", "QuotaSample", "RunEvidence", "TableRecord", "TableStatus",
    "UtilizationRow", "WorkloadRun", "find_runs", "platform_rows", "run_dir_for", "safe_segment", "schema", "scrub",
    "scrub_text", "to_arrow",
]
