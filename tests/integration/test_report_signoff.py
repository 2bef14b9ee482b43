"""The acceptance meeting through the real Airflow: reviewers, each signed in as their own Airflow user, sign off
their blocks in the poc_report trigger form (REST API); the report shows who confirmed what and keeps an
objected item open; a reviewer signed in as themselves who claims another's name (in the form or in the conf's
``signoffs``, with a forged ``signed_in_as``) is shown as an unverified claim and never counted; every format
and the sealed bundle are written, and the bundle holds no secret: no token of the simulated cluster's
kubeconfig, no Airflow password.

The evidence is a correct platform's synthetic evidence (``gpupoc.validation.synthetic``), validated, with
the cluster's tokens planted where a careless collector would put them (a table cell, a document): the
evidence writer must have redacted them, and nothing else may carry them into the bundle.
"""

from __future__ import annotations

import json
import shutil
import tarfile
import tempfile
from datetime import datetime, timedelta, timezone
from pathlib import Path

import pandas as pd
import pytest
import yaml

from gpupoc.airflow_runtime.client import AirflowClient
from gpupoc.airflow_runtime.processes import down, up
from gpupoc.airflow_runtime.settings import RuntimeSettings, admin_password, free_port, user_password
from gpupoc.pipeline.common import repo_root

pytestmark = [pytest.mark.integration, pytest.mark.timeout(3600), pytest.mark.xdist_group("airflow")]  # hang guard
DAG = "poc_report"
REVIEWERS = [{"name": "Zhao Min", "role": "security", "airflow_user": "zhao"},
             {"name": "Li Lei", "role": "platform", "airflow_user": "li"},
             {"name": "Wang Fang", "role": "business", "airflow_user": "wang"},
             {"name": "Sun Hua", "role": "management", "airflow_user": "sun"}]
USERS = tuple(r["airflow_user"] for r in REVIEWERS)
SCORES = {"reviewer": "Wang Fang", "reviewer_role": "business", "ui_usability": 4, "documentation": 4,
          "training_cost": 4}


def evidence_with_planted_secrets(root: Path, kubeconfig: Path) -> list[str]:
    """Validated synthetic evidence; the tenant isolation run also got the cluster's tokens offered to the
    writer in a table cell and in a document. Returns every token of the kubeconfig."""
    from gpupoc.evidence import EvidenceWriter
    from gpupoc.validation import synthetic as syn
    from gpupoc.validation import validate_run

    kc = yaml.safe_load(kubeconfig.read_text())
    tokens = [u["user"]["token"] for u in kc["users"] if u["user"].get("token")]
    syn.write_good_root(root)
    tables = syn.good_tables("tenant_isolation")
    tables["platform_info"] = pd.DataFrame([{"key": "auth", "value": f"Authorization: Bearer {tokens[0]}",
                                             "source": "probe request"}])
    run = syn.write_run(root, "tenant_isolation", "scheduled__2", tables, window_end=syn.T0 + timedelta(hours=2))
    w = EvidenceWriter(root, "poc_tenant_isolation", "scheduled__2")
    w.write_json("client_config", {"kubeconfig_text": kubeconfig.read_text(),
                                   "contexts": [{"name": u["name"], "token": u["user"].get("token")}
                                                for u in kc["users"]]})
    m = json.loads((run / "manifest.json").read_text())
    w.write_manifest(window_start=m["collection_window"]["start"], window_end=m["collection_window"]["end"],
                     plan_hash=m["plan_hash"], platform=m["platform"], extra={"test_class": "tenant_isolation"})
    validate_run(run)
    return tokens


@pytest.fixture
def meeting(start_sim):
    """A plan over the evidence (reviewers named), Airflow running with it; down at the end."""
    sim = start_sim()
    work = Path(tempfile.mkdtemp(prefix="gpupoc-signoff-it-"))
    root = work / "evidence"
    tokens = evidence_with_planted_secrets(root, sim.kubeconfig)
    plan = yaml.safe_load((repo_root() / "plans" / "default.yaml").read_text())
    plan["platform"]["kubeconfig"] = str(sim.kubeconfig)
    plan["evidence_root"] = str(root)
    plan["evidence_sources"]["audit_log_path"] = str(sim.audit_log)
    tomorrow = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(days=1)
    plan["window"].update(start=tomorrow.isoformat(), end=(tomorrow + timedelta(days=7)).isoformat())
    plan["report"]["reviewers"] = REVIEWERS
    plan_file = work / "plan.yaml"
    plan_file.write_text(yaml.safe_dump(plan, sort_keys=False))
    settings = RuntimeSettings(home=work / "airflow", port=free_port(), paused_at_creation=True,
                               extra_env={"GPUPOC_PLAN": str(plan_file)}, users=USERS)
    up(settings)
    try:
        client = AirflowClient.for_home(settings.home)
        client.wait_dag(DAG, timeout=600)
        client.unpause(DAG)
        yield client, settings, plan_file, root, tokens
    finally:
        down(settings.home)
        shutil.rmtree(work, ignore_errors=True)


def _as(settings, user: str) -> AirflowClient:
    """A client signed in as ``user`` (a reviewer's own Airflow user)."""
    return AirflowClient(settings.url, user, user_password(settings.home, user))


def _report(client, root: Path, conf: dict) -> tuple[dict, Path]:
    run = client.trigger(DAG, conf)
    # one task builds, prints and seals the report: minutes on a loaded machine; the timeout guards a hang
    final = client.wait_run(DAG, run["dag_run_id"], timeout=1500, poll=3)
    assert final["state"] == "success", final
    from gpupoc.plan import load_plan
    from gpupoc.report.airflow import report_out_dir

    out = report_out_dir(load_plan(conf["plan"]), run["dag_run_id"])
    return json.loads((out / "report.json").read_text()), out


def _block(report: dict, role: str) -> dict:
    return next(b for b in report["signoff"] if b["role"] == role)


def test_reviewers_sign_off_through_the_trigger_form_and_the_bundle_holds_no_secret(meeting):
    from gpupoc.exceptions import ApiError
    from gpupoc.report.bundle import bundle_path, verify

    client, settings, plan_file, root, tokens = meeting
    base = {"plan": str(plan_file), **SCORES}
    with pytest.raises(ApiError) as exc:  # the form offers the four roles only
        client.trigger(DAG, {**base, "signoff_reviewer": "Zhao Min", "signoff_role": "auditor",
                             "signoff_action": "confirm"})
    assert exc.value.status == 400, exc.value

    li, zhao = _as(settings, "li"), _as(settings, "zhao")
    # Li Lei, signed in as li, objects in his own name and claims to sign for Zhao Min and Sun Hua
    claims = [{"reviewer": "Zhao Min", "role": "security", "action": "confirm"},
              {"reviewer": "Sun Hua", "role": "management", "action": "confirm", "signed_in_as": "sun"}]
    first, _ = _report(li, root, {**base, "signoff_reviewer": "Li Lei", "signoff_role": "platform",
                                  "signoff_action": "object", "signoff_items": ["scheduling_policy"],
                                  "signoff_comment": "no fair-share scenario was run", "signoffs": claims})
    items = {i["id"]: i for i in first["items"]}
    assert items["scheduling_policy"]["verdict"] == "not_verified", "an objection keeps the item open"
    assert "no fair-share scenario was run" in items["scheduling_policy"]["reason"]
    assert _block(first, "platform")["status"] == "objected"
    sec, mgmt = _block(first, "security"), _block(first, "management")
    assert sec["status"] == "open" and mgmt["status"] == "open", "li signed in: neither claim counts"
    assert [u["reason"] for u in sec["unverified"]] == ["signed in as li, not as Zhao Min's Airflow user zhao"]
    assert [u["reason"] for u in mgmt["unverified"]] == ["signed in as li, not as Sun Hua's Airflow user sun"]

    second, out = _report(zhao, root, {**base, "signoff_reviewer": "Zhao Min", "signoff_role": "security",
                                       "signoff_action": "confirm", "signoff_comment": "probes checked"})
    sec = _block(second, "security")
    assert sec["status"] == "confirmed" and {ln["by"][0]["reviewer"] for ln in sec["lines"]} == {"Zhao Min"}
    assert sec["lines"][0]["by"][0]["comment"] == "probes checked" and sec["lines"][0]["by"][0]["at"]
    assert sec["lines"][0]["by"][0]["signed_in_as"] == "zhao"
    assert len(sec["unverified"]) == 1, "the earlier run's forged claim is still shown, still not counted"
    assert _block(second, "platform")["status"] == "objected", "Li Lei's own objection still counts"
    assert _block(second, "management")["status"] == "open"
    assert second["decision"] == "limited-go-live"
    html = (out / "report.html").read_text()
    assert "Zhao Min" in html and "Li Lei" in html and "no fair-share scenario was run" in html
    assert "Unverified claims (not counted)" in html and "signed in as li, not as Sun Hua" in html

    for name in ("report.html", "summary.html", "report.md", "report.json", "report.junit.xml"):
        assert (out / name).is_file(), name
    bundle = bundle_path(out)
    assert bundle.is_file() and verify(bundle).ok
    secrets = tokens + [admin_password(settings.home)] + [user_password(settings.home, u) for u in USERS]
    assert len(tokens) >= 4 and all(len(s) >= 8 for s in secrets)
    with tarfile.open(bundle, "r:gz") as tar:
        members = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}
    planted = next(d for n, d in members.items() if n.endswith("poc_tenant_isolation/scheduled__2/files/client_config.json"))
    assert b"[REDACTED]" in planted, "the planted tokens reached the evidence writer, which redacted them"
    leaks = [(name, s[:6]) for name, data in members.items() for s in secrets if s.encode() in data]
    assert not leaks, f"secrets in the bundle: {leaks}"
