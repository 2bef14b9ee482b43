"""EvidenceWriter: run-scoped parquet, idempotent reruns, not-verified tables and a complete manifest."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pyarrow.parquet as pq
import pytest

from gpupoc.evidence import EvidenceWriter, PlatformInfo, QueueSnapshot, safe_segment

RUN = "manual__2026-11-30T07:00:00+00:00"
T0 = datetime(2026, 11, 30, 7, 0, tzinfo=timezone.utc)


def snapshots(n: int = 3) -> list[QueueSnapshot]:
    return [QueueSnapshot(ts=T0, pod=f"p-{i}", namespace="team-nlp", phase="Pending", reason="Unschedulable",
                          message="0/5 nodes are available: 3 Insufficient nvidia.com/gpu.", source="pod condition")
            for i in range(n)]


def test_tables_land_under_a_deterministic_run_scoped_path(tmp_path):
    w = EvidenceWriter(tmp_path, "poc_queue_congestion", RUN)
    rec = w.write("queue_snapshots", snapshots(), source="kubernetes api: pods")
    expected_dir = tmp_path / "poc_queue_congestion" / safe_segment(RUN)
    assert w.run_dir == expected_dir
    assert (expected_dir / "tables" / "queue_snapshots.parquet").is_file()
    assert rec.rows == 3 and rec.verified and rec.path == "tables/queue_snapshots.parquet"
    assert ":" not in safe_segment(RUN) and "+" not in safe_segment(RUN)
    assert EvidenceWriter(tmp_path, "poc_queue_congestion", RUN).run_dir == expected_dir  # another task, same path


def test_distinct_run_ids_never_share_a_directory():
    assert safe_segment("a:b") != safe_segment("a_b")
    assert safe_segment("plain-run_1") == "plain-run_1"


def test_rewriting_a_table_overwrites_it_byte_for_byte(tmp_path):
    w = EvidenceWriter(tmp_path, "poc_queue_congestion", RUN)
    first = w.write("queue_snapshots", snapshots(), source="api")
    w.write("queue_snapshots", snapshots(5), source="api")
    assert pq.read_table(w.table_path("queue_snapshots")).num_rows == 5
    again = w.write("queue_snapshots", snapshots(), source="api")
    assert again.sha256 == first.sha256
    assert sorted(p.name for p in w.tables_dir.iterdir()) == ["queue_snapshots.meta.json",
                                                              "queue_snapshots.parquet"]


def test_not_verified_table_is_empty_typed_and_carries_its_reason(tmp_path):
    w = EvidenceWriter(tmp_path, "poc_utilization", RUN)
    rec = w.mark_not_verified("utilization", "prometheus at http://127.0.0.1:9090 refused the connection",
                              "prometheus")
    t = pq.read_table(w.table_path("utilization"))
    assert t.num_rows == 0 and "util_avg" in t.schema.names
    assert not rec.verified and "refused" in rec.reason
    with pytest.raises(ValueError, match="needs a reason"):
        w.mark_not_verified("utilization", "", "prometheus")


def test_manifest_lists_every_table_with_rows_hash_source_and_window(tmp_path):
    w = EvidenceWriter(tmp_path, "poc_queue_congestion", RUN)
    w.write("queue_snapshots", snapshots(), source="kubernetes api")
    w.write("platform_info", [PlatformInfo(key="server_version", value="v1.31.4", source="/version")],
            source="kubernetes api")
    w.mark_not_verified("explanations", "no snapshots", "pipeline")
    w.write_json("wave_release", {"released": 20, "spread_seconds": 0.4})
    path = w.write_manifest(window_start=T0, window_end=datetime(2026, 11, 30, 7, 5, tzinfo=timezone.utc),
                            plan_hash="ab" * 32, platform={"name": "gpupoc-sim", "version": "v1.31.4"},
                            expected_tables=["queue_snapshots", "explanations", "workload_runs"])
    m = json.loads(path.read_text())
    assert m["dag_id"] == "poc_queue_congestion" and m["run_id"] == RUN and m["plan_hash"] == "ab" * 32
    assert m["collection_window"] == {"start": "2026-11-30T07:00:00Z", "end": "2026-11-30T07:05:00Z"}
    qs = m["tables"]["queue_snapshots"]
    assert qs["rows"] == 3 and qs["verified"] is True and qs["source"] == "kubernetes api"
    assert len(qs["sha256"]) == 64
    assert m["tables"]["explanations"] == {"path": "tables/explanations.parquet", "rows": 0,
                                           "sha256": m["tables"]["explanations"]["sha256"], "source": "pipeline",
                                           "verified": False, "reason": "no snapshots"}
    assert m["tables"]["workload_runs"]["verified"] is False
    assert m["tables"]["workload_runs"]["reason"].startswith("not collected")
    assert m["not_verified"] == ["explanations", "workload_runs"] and m["verified"] is False
    assert m["files"]["wave_release.json"]["path"] == "files/wave_release.json"
    assert m["platform"] == {"name": "gpupoc-sim", "version": "v1.31.4"}


def test_manifest_is_identical_on_rerun(tmp_path):
    def run() -> bytes:
        w = EvidenceWriter(tmp_path, "poc_audit_trail", RUN)
        w.write("queue_snapshots", snapshots(), source="api")
        return w.write_manifest(window_start=T0, window_end=T0, plan_hash="0" * 64).read_bytes()

    assert run() == run()


def test_manifest_and_documents_never_hold_secrets(tmp_path):
    w = EvidenceWriter(tmp_path, "poc_tenant_isolation", RUN)
    w.write("platform_info", [{"key": "auth", "value": "Authorization: Bearer sekret-token-value"}], source="x")
    doc = w.write_json("probe", {"request": {"headers": {"Authorization": "Bearer sekret-token-value"}},
                                 "kubeconfig": "/root/.kube/config"})
    m = w.write_manifest(window_start=T0, window_end=T0, plan_hash="0" * 64,
                         platform={"kubeconfig": "/root/.kube/config", "token": "sekret-token-value"})
    for p in (doc, m):
        assert b"sekret-token-value" not in p.read_bytes(), p
    assert "sekret-token-value" not in str(pq.read_table(w.table_path("platform_info")).to_pylist())
    assert b"/root/.kube/config" not in m.read_bytes()


def test_a_list_document_is_written_item_by_item_exactly_as_one_document(tmp_path):
    from gpupoc.evidence.scrub import scrub
    from gpupoc.evidence.writer import _json_bytes

    items = [{"pod": "p-0", "taken_at": T0, "gates": ["a", "b"], "nested": {"z": [1, {"y": None}], "a": "x\ny"}},
             {"message": "0/5 节点可用: Insufficient nvidia.com/gpu", "token": "abc", "empty": [], "e": {}},
             "Authorization: Bearer abc.def.ghi", 3, None, [[], [1, 2]]]
    w = EvidenceWriter(tmp_path, "poc_queue_congestion", RUN)
    path = w.write_json("observations", items)
    assert path.read_bytes() == _json_bytes(scrub(items)), "the streamed list differs from the one-piece document"
    assert json.loads(path.read_text())[1]["token"] == "[REDACTED]", "each item is scrubbed"
    assert w.write_json("empty", []).read_bytes() == _json_bytes([])
    made = w.write_json_items("made", (dict(i) if isinstance(i, dict) else i for i in items))
    assert made.read_bytes() == _json_bytes(scrub(items)), "items made one at a time are written as the list"
    assert w.write_json_items("none", iter(())).read_bytes() == _json_bytes([])


def test_a_copied_document_is_the_one_its_content_would_make_and_replaces_an_earlier_one(tmp_path):
    pods = [{"metadata": {"namespace": "team-nlp", "name": f"p-{i}"}, "status": {"phase": "Succeeded"}}
            for i in range(3)]
    w = EvidenceWriter(tmp_path, "poc_queue_congestion", RUN)
    w.write_json_items("observed_pods", iter(pods))
    w.write_json("pods", [{"stale": True}])
    copied = w.copy_json("observed_pods", "pods")
    assert copied == w.files_dir / "pods.json"
    assert copied.read_bytes() == w.write_json("made", pods).read_bytes(), "the copy differs from the document made"
    assert not [p for p in w.files_dir.iterdir() if p.name.startswith(".")], "no temporary file is left"


def test_a_long_list_checked_for_secrets_a_chunk_at_a_time_is_scrubbed_item_by_item(tmp_path):
    from gpupoc.evidence.scrub import scrub
    from gpupoc.evidence.writer import SECRET_CHECK_CHUNK, _json_bytes

    items = [{"pod": f"p-{i}", "phase": "Succeeded"} for i in range(2 * SECRET_CHECK_CHUNK + 3)]
    items[SECRET_CHECK_CHUNK + 7]["note"] = "Authorization: Bearer abc.def.ghi"
    items[-1]["token"] = "abc"
    path = EvidenceWriter(tmp_path, "poc_queue_congestion", RUN).write_json_items("pods", iter(items))
    assert path.read_bytes() == _json_bytes(scrub(items))
    written = json.loads(path.read_text())
    assert written[-1]["token"] == "[REDACTED]" and "abc.def.ghi" not in json.dumps(written)
    assert written[0] == items[0] and len(written) == len(items)


def test_suite_parameters_stored_before_the_manifest_are_in_it_with_their_hash(tmp_path):
    from gpupoc.evidence import RunEvidence
    from gpupoc.evidence.writer import sha256_file

    w = EvidenceWriter(tmp_path, "poc_queue_congestion", RUN)
    path = w.write_suite_parameters({"max_wait_seconds": 600, "services_defined": True})
    manifest = json.loads(w.write_manifest(window_start=T0, window_end=T0, plan_hash="0" * 64).read_text())
    assert manifest["suite_parameters"] == {"max_wait_seconds": 600, "services_defined": True}
    assert manifest["files"]["suite_parameters.json"]["sha256"] == sha256_file(path)
    assert RunEvidence.open(w.run_dir).suite_parameters == manifest["suite_parameters"]


def test_suite_parameters_stored_after_the_manifest_update_it_and_nothing_else(tmp_path):
    from gpupoc.evidence import RunEvidence

    w = EvidenceWriter(tmp_path, "poc_queue_congestion", RUN)
    w.write("queue_snapshots", snapshots(), source="api")
    mp = w.write_manifest(window_start=T0, window_end=T0, plan_hash="0" * 64, extra={"test_class": "x"})
    before = json.loads(mp.read_text())
    assert "suite_parameters" not in before and RunEvidence.open(w.run_dir).suite_parameters is None
    w.write_suite_parameters({"gangs_in_wave": True})
    after = json.loads(mp.read_text())
    assert after.pop("suite_parameters") == {"gangs_in_wave": True}
    assert after.pop("files")["suite_parameters.json"]["path"] == "files/suite_parameters.json"
    before.pop("files")
    assert after == before, "the tables, window, plan hash and platform are left as they were"
    unchanged = mp.read_bytes()
    w.write_suite_parameters({"gangs_in_wave": True})
    assert mp.read_bytes() == unchanged


def test_a_manifest_whose_suite_parameters_are_not_an_object_stored_none(tmp_path):
    from gpupoc.evidence import RunEvidence

    w = EvidenceWriter(tmp_path, "poc_queue_congestion", RUN)
    mp = w.write_manifest(window_start=T0, window_end=T0, plan_hash="0" * 64)
    mp.write_text(json.dumps({**json.loads(mp.read_text()), "suite_parameters": ["services_defined"]}))
    assert RunEvidence.open(w.run_dir).suite_parameters is None


def test_a_list_document_keeps_big_integers_and_writes_not_a_number_as_null(tmp_path):
    w = EvidenceWriter(tmp_path, "poc_queue_congestion", RUN)
    path = w.write_json("numbers", [{"big": 2**70, "ratio": 0.25}, {"ratio": float("nan")}])
    assert json.loads(path.read_text()) == [{"big": 2**70, "ratio": 0.25}, {"ratio": None}]
