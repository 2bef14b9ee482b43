"""A report rebuilt from a class run's real evidence judges exactly what the run judged (docs/report.md): the
congestion class with the default plan's online service (``test_service_classes.short_plan``) run through the
pipeline's own steps against the simulated cluster, then revalidated by ``gpupoc report --revalidate`` with the
default plan, whose thresholds are not those the run stored:

- the same checks (the service's SVC-01..03 among them) with the same verdicts as the run's own validation;
- the same run with a service SLO that did not hold (its stored ``service_slo`` table edited before validation,
  as a collector would have written it) fails SVC-01 in the run's validation and still fails it revalidated.
"""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gpupoc.cli import main
from gpupoc.evidence.reader import RunEvidence
from gpupoc.evidence.writer import sha256_file
from gpupoc.steps import finish
from gpupoc.steps.context import RunContext
from gpupoc.validation.stored import load_summary

from .test_service_classes import QC, run

pytestmark = [pytest.mark.integration, pytest.mark.timeout(900)]
PLAN = Path(__file__).resolve().parents[2] / "plans" / "default.yaml"


def _revalidated(run_dir: Path, out: Path) -> dict[str, str]:
    """``gpupoc report RUN_DIR --plan plans/default.yaml --revalidate``; the run's verdicts it judged."""
    assert main(["report", str(run_dir), "--plan", str(PLAN), "--revalidate", "--out", str(out), "--no-pdf",
                 "--no-bundle"]) == 0
    report = json.loads((out / "report.json").read_text())
    judged = {c["check_id"]: c["verdict"] for it in report["items"] for c in it.get("checks", [])
              if c.get("test_class") == QC}
    stored = {c.check_id: c.verdict.value for c in load_summary(RunEvidence.open(run_dir)).checks}
    assert judged == stored, "the report judges what the revalidation stored"
    return stored


def _slo_not_held(run_dir: Path) -> None:
    """The run's ``service_slo`` says the SLO did not hold, sealed in the manifest as its collector seals it."""
    path = run_dir / "tables" / "service_slo.parquet"
    table = pq.read_table(path)
    frame = table.to_pandas()
    frame["held"] = False
    pq.write_table(pa.Table.from_pandas(frame, schema=table.schema, preserve_index=False), path)
    manifest_path = run_dir / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    manifest["tables"]["service_slo"]["sha256"] = sha256_file(path)
    manifest_path.write_text(json.dumps(manifest))


def test_revalidated_real_evidence_judges_the_same_checks_and_a_failed_slo_stays_failed(tmp_path):
    qc = run(tmp_path, QC)
    assert qc.verdicts.get("SVC-01") == "pass", qc.verdicts
    params = RunEvidence.open(qc.run_dir).suite_parameters
    assert params and params["services_defined"] is True and params["service_traffic_defined"] is True
    assert _revalidated(qc.run_dir, tmp_path / "report") == qc.verdicts, "the same checks, the same verdicts"

    _slo_not_held(qc.run_dir)
    ctx = RunContext(str(tmp_path / QC / "plan.yaml"), f"poc_{QC}", qc.run_dir.name, QC, task="validate")
    validation = finish.validate(ctx, str(qc.run_dir))  # the DAG's validate task
    assert "SVC-01" in validation["failed_checks"], validation
    again = _revalidated(qc.run_dir, tmp_path / "report-failed")
    assert again["SVC-01"] == "fail", again
