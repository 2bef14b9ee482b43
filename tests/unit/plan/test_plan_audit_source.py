"""The plan's audit source: ``evidence_sources.audit`` (file, webhook, command) or the older
``audit_log_path``, never both; a command selects its window; a record not there yet is a warning."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.plan import parse_plan


def sources(data: dict, **values) -> dict:
    data["evidence_sources"] = {k: v for k, v in data["evidence_sources"].items() if k != "audit_log_path"} | values
    return data


def test_audit_log_path_still_means_a_file_source(data, tmp_path):
    spec = parse_plan(data, "plan.yaml", base_dir=tmp_path).evidence_sources.audit_spec
    assert (spec.kind, spec.path) == ("file", "../var/sim/audit.log")


def test_a_webhook_source_is_read_from_its_record_and_warned_about_until_it_exists(data, tmp_path):
    plan = parse_plan(sources(data, audit={"kind": "webhook", "record": "audit/events.jsonl",
                                           "url": "http://127.0.0.1:9096"}), "plan.yaml", base_dir=tmp_path)
    assert plan.evidence_sources.audit_spec.kind == "webhook"
    [warning] = [w for w in plan.warnings if w.startswith("evidence_sources.audit.record")]
    assert "gpupoc audit webhook up" in warning


def test_audit_and_audit_log_path_together_are_refused(data):
    data["evidence_sources"]["audit"] = {"kind": "file", "path": "audit.log"}
    with pytest.raises(ConfigError, match="set audit or audit_log_path, not both"):
        parse_plan(data, "plan.yaml")


@pytest.mark.parametrize("audit,why", [
    ({"kind": "command", "command": "gcloud logging read 'protoPayload.serviceName=k8s.io'", "format": "gke"},
     "must select the window with {start} and {end}"),
    ({"kind": "command", "command": "x {start}", "format": "splunk"}, "audit.command.format"),
    ({"kind": "syslog", "path": "x"}, "evidence_sources.audit"),
])
def test_a_malformed_audit_source_names_the_field(data, audit, why):
    with pytest.raises(ConfigError) as info:
        parse_plan(sources(data, audit=audit), "plan.yaml")
    assert any(why in e for e in info.value.errors), info.value.errors
