"""An evidence root laid out as the pipeline writes it: two reports, a Data Docs site, evidence and secrets."""

import json
from pathlib import Path

import pytest
from fastapi.testclient import TestClient

from gpupoc.ui.app import create_app
from gpupoc.ui.locations import UiPaths

REPORT_HTML = """<!doctype html><html><head><title>GPU POC report</title></head><body>
<h1>Decision: {decision}</h1>
<table id="items"><tr><td>permission_isolation</td><td>must</td><td>{verdict}</td></tr></table>
<a href="#item-permission_isolation">item</a>
<img src="charts/queue_timeline.svg">
<a href="../../data_docs/local_site/index.html">Data Docs</a>
<a href="../../poc_tenant_isolation/scheduled__1/tables/access_probes.parquet">table</a>
<a href="../../poc_tenant_isolation/scheduled__1/validation/tenant_isolation.access_probes.json">result</a>
<a href="../../gx/uncommitted/config_variables.yml">not linkable</a>
<a href="https://example.com/x">external</a>
</body></html>"""


def write_report(report_dir: Path, run_id: str, decision: str, generated_at: str, must_verdict: str = "pass") -> Path:
    d = report_dir / run_id
    (d / "charts").mkdir(parents=True)
    (d / "report.html").write_text(REPORT_HTML.format(decision=decision, verdict=must_verdict), encoding="utf-8")
    (d / "report.md").write_text(f"# Decision: {decision}\n", encoding="utf-8")
    (d / "charts" / "queue_timeline.svg").write_text("<svg xmlns='http://www.w3.org/2000/svg'/>", encoding="utf-8")
    items = [{"id": "permission_isolation", "tier": "must", "verdict": must_verdict},
             {"id": "queue_explainability", "tier": "key", "verdict": "pass"},
             {"id": "ui_usability", "tier": "experience", "verdict": "not_verified"}]
    (d / "report.json").write_text(json.dumps({"title": "GPU POC", "language": "en", "generated_at": generated_at,
                                               "decision": decision, "items": items}), encoding="utf-8")
    return d


@pytest.fixture
def root(tmp_path) -> Path:
    root = tmp_path / "evidence"
    write_report(root / "report", "scheduled__2026-11-29", "postpone", "2026-11-29T08:00:00+00:00", "fail")
    write_report(root / "report", "manual__2026-11-30", "go-live", "2026-11-30T08:00:00+00:00")
    site = root / "data_docs" / "local_site"
    (site / "expectations" / "tenant_isolation").mkdir(parents=True)
    (site / "index.html").write_text("<html><body><h1>Data Docs</h1>tenant_isolation-access_probes</body></html>")
    (site / "expectations" / "tenant_isolation" / "access_probes.html").write_text("<p>suite access_probes</p>")
    for stamp in ("20261129T080000.000000Z", "20261130T080000.000000Z"):
        val = site / "validations" / "tenant_isolation" / "access_probes" / "poc_tenant_isolation__scheduled__1" / stamp
        val.mkdir(parents=True)
        (val / "evidence_tenant_isolation-access_probes.html").write_text(f"<p>result {stamp}</p>")
    run = root / "poc_tenant_isolation" / "scheduled__1"
    (run / "tables").mkdir(parents=True)
    (run / "validation").mkdir()
    (run / "manifest.json").write_text(json.dumps({
        "dag_id": "poc_tenant_isolation", "run_id": "scheduled__1", "test_class": "tenant_isolation",
        "verified": False, "not_verified": ["quota_samples"],
        "tables": {"access_probes": {"path": "tables/access_probes.parquet", "rows": 19, "verified": True,
                                     "source": "kubernetes-api", "reason": ""},
                   "quota_samples": {"path": "", "rows": 0, "verified": False, "source": "kubernetes-api",
                                     "reason": "ResourceQuota not readable"}}}))
    checks = [{"check_id": "ISO-02", "item": "permission_isolation", "tier": "must", "verdict": "fail",
               "signal": "every cross-tenant attempt got the expected answer", "reason": "2 of 19 rows unexpected",
               "suite": "tenant_isolation.access_probes", "failure_class": "product_capability_gap"}]
    (run / "validation" / "summary.json").write_text(json.dumps({"suites": [{"checks": checks}]}))
    (run / "tables" / "access_probes.parquet").write_bytes(b"PAR1")
    (run / "validation" / "tenant_isolation.access_probes.json").write_text('{"success": true}')
    (root / "gx" / "uncommitted").mkdir(parents=True)
    (root / "gx" / "uncommitted" / "config_variables.yml").write_text("token: s3cr3t-gx\n")
    (tmp_path / "kubeconfig").write_text("users: [{user: {token: s3cr3t-kube}}]\n")
    return root


@pytest.fixture
def client(root) -> TestClient:
    paths = UiPaths.for_root(root)
    return TestClient(create_app(paths=lambda: paths))
