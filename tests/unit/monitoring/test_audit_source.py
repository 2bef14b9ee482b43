"""One interface over every audit source: a JSON-lines file or record, a command exporting a window (its
placeholders, its failures), the catch-up wait, and the freshness probe."""

from __future__ import annotations

import json
import sys
import threading
from datetime import datetime, timedelta, timezone
from types import SimpleNamespace

import pytest

from gpupoc.common.timefmt import rfc3339
from gpupoc.exceptions import SourceUnavailable
from gpupoc.monitoring.audit_source import CommandSource, LinesSource, audit_fresh, caught_up

T0 = datetime(2026, 12, 1, 8, 0, tzinfo=timezone.utc)


def ev(name: str, at: datetime, resource: str = "pods") -> dict:
    stamp = at.strftime("%Y-%m-%dT%H:%M:%S.%fZ")
    return {"kind": "Event", "apiVersion": "audit.k8s.io/v1", "auditID": name, "stage": "ResponseComplete",
            "verb": "create", "objectRef": {"resource": resource, "namespace": "gpupoc-system", "name": name},
            "requestReceivedTimestamp": stamp, "stageTimestamp": stamp}


def write(path, events) -> None:
    with path.open("a") as fh:
        for e in events:
            fh.write(json.dumps(e) + "\n")


def test_a_lines_source_keeps_the_window_and_skips_damaged_lines(tmp_path):
    path = tmp_path / "audit.log"
    write(path, [ev("early", T0), ev("inside", T0 + timedelta(minutes=5))])
    with path.open("a") as fh:
        fh.write('{"kind": "Event", "verb": "cre')  # a line being written
    src = LinesSource(path, "audit log", "fix it")
    assert [e["auditID"] for e in src.events(T0 + timedelta(minutes=1), T0 + timedelta(minutes=9))] == ["inside"]
    assert len(src.events()) == 2


def test_a_line_with_bytes_that_are_not_utf8_is_read_with_them_replaced_not_skipped(tmp_path):
    path = tmp_path / "audit.log"
    write(path, [ev("first", T0)])
    with path.open("ab") as fh:
        fh.write(json.dumps(ev("second", T0)).encode().replace(b'"second"', b'"sec\xffond"') + b"\n")
    src = LinesSource(path, "audit log", "fix it")
    assert [e["auditID"] for e in src.events()] == ["first", "sec\ufffdond"] and src.skipped == 0


def test_a_lines_source_read_again_parses_only_what_arrived_and_reads_a_rotated_file_anew(tmp_path):
    path = tmp_path / "audit.log"
    write(path, [ev("first", T0)])
    with path.open("a") as fh:
        fh.write('{"kind": "Event", "auditID": "half')  # the writer is mid-line
    src = LinesSource(path, "audit log", "fix it")
    assert [e["auditID"] for e in src.events()] == ["first"] and src.skipped == 1
    with path.open("a") as fh:
        fh.write('way", "stageTimestamp": "2026-12-01T08:00:01Z"}\n')
    write(path, [ev("third", T0)])
    assert [e["auditID"] for e in src.events()] == ["first", "halfway", "third"] and src.skipped == 0
    path.unlink()
    write(path, [ev("after-rotation", T0)])
    assert [e["auditID"] for e in src.events()] == ["after-rotation"]


def test_a_record_line_may_be_an_event_list_batch_as_the_webhook_backend_posts_it(tmp_path):
    path = tmp_path / "record.jsonl"
    batch = {"kind": "EventList", "apiVersion": "audit.k8s.io/v1", "items": [ev("a", T0), ev("b", T0)]}
    path.write_text(json.dumps(batch) + "\n" + json.dumps(ev("c", T0)))  # the last line without its newline
    assert [(e["auditID"], e["kind"]) for e in LinesSource(path, "record", "").events()] == [
        ("a", "Event"), ("b", "Event"), ("c", "Event")]


def test_a_lines_source_selects_the_lines_a_pattern_finds_in_the_window_and_parses_no_other(tmp_path):
    import re

    path = tmp_path / "record.jsonl"
    gone = {**ev("gone", T0 + timedelta(minutes=5)), "verb": "delete"}
    batch = {"kind": "EventList", "apiVersion": "audit.k8s.io/v1",
             "items": [{**ev("in-batch", T0 + timedelta(minutes=6)), "verb": "delete"}, ev("beside", T0)]}
    write(path, [ev("made", T0), {**ev("early", T0), "verb": "delete"}, gone, batch])
    with path.open("a") as fh:
        fh.write('{"verb": "create", "auditID": "damaged and never parsed"\n{"verb": "delete", "audit')
    src = LinesSource(path, "audit log", "fix it")
    picked = src.select(re.compile(rb'"verb"\s*:\s*"delete"'), T0 + timedelta(minutes=1))
    assert [e["auditID"] for e in picked] == ["gone", "in-batch"], "only found lines, in the window"
    assert [e["auditID"] for e in src.select(re.compile(rb"in-batch"))] == ["in-batch", "beside"]
    with pytest.raises(SourceUnavailable):
        LinesSource(tmp_path / "none.log", "audit log", "fix it").select(re.compile(rb"x"))


def test_the_plans_audit_log_path_is_a_file_source_and_audit_a_source_of_its_kind(tmp_path):
    from gpupoc.monitoring.audit_source import plan_audit_source
    from gpupoc.plan import load_plan
    from gpupoc.plan.loader import DEFAULT_PLAN

    plan = load_plan(DEFAULT_PLAN)
    src = plan_audit_source(plan)
    assert isinstance(src, LinesSource) and src.path == plan.resolve_path(plan.evidence_sources.audit_log_path)
    hook = {"kind": "webhook", "record": "audit-webhook.jsonl"}
    es = plan.evidence_sources.model_validate({"audit": hook})
    src = plan_audit_source(plan.model_copy(update={"evidence_sources": es}))
    assert isinstance(src, LinesSource) and src.path == plan.resolve_path("audit-webhook.jsonl")
    assert src.catch_up_s == 60 and "gpupoc audit webhook up" in src.fix


def test_a_missing_record_names_itself_and_the_fix(tmp_path):
    with pytest.raises(SourceUnavailable, match="audit events not found.*gpupoc audit webhook up"):
        LinesSource(tmp_path / "none.jsonl", "record", "run `gpupoc audit webhook up`").events()


def test_a_command_gets_the_window_and_its_output_is_converted(tmp_path):
    script = tmp_path / "export.py"
    script.write_text("import json, sys\n"
                      "start, end, start_ms = sys.argv[1:4]\n"
                      "print(json.dumps({'events': [{'message': json.dumps({'kind': 'Event', 'verb': 'patch', "
                      "'auditID': start + '|' + end + '|' + start_ms, 'stageTimestamp': start})}]}))\n")
    src = CommandSource(f"{sys.executable} {script} {{start}} {{end}} {{start_ms}}", "eks")
    [got] = src.events(T0, T0 + timedelta(minutes=10))
    assert got["auditID"] == f"{rfc3339(T0)}|{rfc3339(T0 + timedelta(minutes=10))}|{int(T0.timestamp() * 1000)}"


@pytest.mark.parametrize("command,fmt,why", [
    ("echo nope >&2; exit 3", "audit-events", "exit 3: nope"),
    ("echo '{\"kind\": \"Pod\"}'", "audit-events", "output is not audit-events"),
])
def test_a_failing_command_is_unavailable_with_what_it_said(command, fmt, why):
    with pytest.raises(SourceUnavailable, match=why):
        CommandSource(command + " # {start}", fmt).events(T0, T0 + timedelta(minutes=1))


def test_catching_up_reads_again_until_the_caller_has_what_it_needs(tmp_path):
    path = tmp_path / "record.jsonl"
    write(path, [ev("first", T0)])
    src = LinesSource(path, "record", "", catch_up_s=20)
    later = threading.Timer(0.3, write, (path, [ev("second", T0 + timedelta(seconds=1))]))
    later.start()
    got = caught_up(src, T0, T0 + timedelta(seconds=1), done=lambda es: any(e["auditID"] == "second" for e in es),
                    poll_s=0.05)
    assert [e["auditID"] for e in got] == ["first", "second"]
    assert [e["auditID"] for e in caught_up(src, T0, T0, done=lambda es: False, timeout_s=0.1, poll_s=0.05)] == \
        ["first", "second"], "a source that never satisfies the caller is read until the timeout"


class ApiServerWritingAudit:
    """Stands in for an API server whose audit backend delivers each request's event after ``delay_s``."""

    def __init__(self, path, delay_s: float | None, status: int = 201):
        self.path, self.delay_s, self.status, self.requests = path, delay_s, status, []

    def call(self, method, path, *, query=None, body=None, **_):
        self.requests.append((method, path, query, body))
        if self.delay_s is not None:
            name = body["metadata"]["name"]
            audited = [ev(name, datetime.now(timezone.utc), "configmaps")]
            threading.Timer(self.delay_s, write, (self.path, audited)).start()
        refused = self.status >= 300
        return SimpleNamespace(ok=not refused, status=self.status, message="forbidden" if refused else "")


def test_the_freshness_probe_is_a_dry_run_write_and_shows_up_within_the_limit(tmp_path):
    path = tmp_path / "record.jsonl"
    path.write_text("")
    api = ApiServerWritingAudit(path, delay_s=0.2)
    res = audit_fresh(LinesSource(path, "record", ""), api, "gpupoc-system", max_delay_s=10, poll_s=0.05)
    [(method, url, query, body)] = api.requests
    assert (method, url, query) == ("POST", "/api/v1/namespaces/gpupoc-system/configmaps", {"dryRun": "All"})
    assert res.fresh and res.probe == body["metadata"]["name"] and res.probe.startswith("gpupoc-audit-probe-")
    assert res.delay_s is not None and res.delay_s > 0


@pytest.mark.parametrize("delay,status,why", [
    (None, 201, "did not arrive within 0.3 s (nothing arrived in it meanwhile)"),
    (0.0, 403, "the probe request was refused: HTTP 403"),
])
def test_a_stale_or_refused_probe_is_not_fresh_and_says_why(tmp_path, delay, status, why):
    path = tmp_path / "record.jsonl"
    path.write_text("")
    res = audit_fresh(LinesSource(path, "record", ""), ApiServerWritingAudit(path, delay, status), "gpupoc-system",
                      max_delay_s=0.3, poll_s=0.05)
    assert not res.fresh and why in res.reason and res.delay_s is None
