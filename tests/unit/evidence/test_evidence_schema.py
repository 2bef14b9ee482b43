"""Row models -> typed Arrow tables: every table has a schema, bad rows name table, row, field, value."""

from __future__ import annotations

from datetime import datetime, timezone

import pyarrow as pa
import pytest

from gpupoc.evidence import TABLES, EvidenceSchemaError, WorkloadRun, schema, to_arrow

REQUIRED_TABLES = {"workload_runs", "queue_snapshots", "explanations", "access_probes", "quota_samples",
                   "utilization", "failure_records", "audit_matches", "artifacts", "platform_info"}


def test_every_table_the_dags_write_has_a_schema():
    assert REQUIRED_TABLES <= set(TABLES)
    for name in TABLES:
        assert isinstance(schema(name), pa.Schema) and len(schema(name)) > 1


def test_workload_runs_schema_types():
    s = schema("workload_runs")
    assert s.field("submitted_at").type == pa.timestamp("us", tz="UTC")
    assert s.field("gpus").type == pa.int64() and s.field("wait_seconds").type == pa.float64()
    assert not s.field("pod").nullable and s.field("node").nullable
    for col in ("run_id", "test_class", "tenant", "namespace", "pod", "workload", "task_type", "priority_class",
                "priority", "gpus", "pool", "node", "submitted_at", "released_at", "scheduled_at", "started_at",
                "finished_at", "wait_seconds", "phase", "exit_code", "reason", "attempt"):
        assert col in s.names, col


def test_dataclass_and_dict_rows_with_times_as_strings_or_datetimes():
    t = datetime(2026, 11, 30, 7, 0, tzinfo=timezone.utc)
    rows = [WorkloadRun(run_id="r", test_class="queue_congestion", tenant="team-nlp", namespace="team-nlp",
                        pod="p-1", workload="v-train-1g", gpus=1, submitted_at=t, wait_seconds=3),
            {"run_id": "r", "test_class": "queue_congestion", "tenant": "team-nlp", "namespace": "team-nlp",
             "pod": "p-2", "workload": "v-train-1g", "submitted_at": "2026-11-30T07:00:01.5Z",
             "scheduled_at": datetime(2026, 11, 30, 7, 0, 4)}]
    table = to_arrow("workload_runs", rows)
    assert table.num_rows == 2 and table.schema == schema("workload_runs")
    d = table.to_pylist()
    assert d[1]["submitted_at"] == datetime(2026, 11, 30, 7, 0, 1, 500000, tzinfo=timezone.utc)
    assert d[1]["scheduled_at"].tzinfo is not None  # naive times are taken as UTC
    assert d[0]["wait_seconds"] == 3.0 and d[1]["wait_seconds"] is None


def test_bad_rows_name_the_table_row_field_and_value():
    base = {"run_id": "r", "test_class": "c", "tenant": "t", "namespace": "n", "pod": "p", "workload": "w"}
    with pytest.raises(EvidenceSchemaError, match=r"workload_runs\[1\]\.gpus: expected an integer, got 'two'"):
        to_arrow("workload_runs", [base, {**base, "gpus": "two"}])
    with pytest.raises(EvidenceSchemaError, match=r"workload_runs\[0\]\.pod: required, got None"):
        to_arrow("workload_runs", [{**base, "pod": None}])
    with pytest.raises(EvidenceSchemaError, match=r"unknown field\(s\) \['gpu_count'\]"):
        to_arrow("workload_runs", [{**base, "gpu_count": 1}])
    with pytest.raises(EvidenceSchemaError, match=r"explanations\[0\]\.explained: expected true or false"):
        to_arrow("explanations", [{"pod": "p", "explained": "yes"}])
    with pytest.raises(EvidenceSchemaError, match="unknown evidence table 'runs'"):
        to_arrow("runs", [])


def test_nan_and_nat_from_pandas_are_missing_values():
    import pandas as pd

    rows = pd.DataFrame([{"pod": "p", "ahead_count": float("nan"), "eta_error_seconds": float("nan")}])
    t = to_arrow("explanations", rows.to_dict("records"))
    assert t.to_pylist()[0]["ahead_count"] is None and t.to_pylist()[0]["eta_error_seconds"] is None
    snaps = to_arrow("queue_snapshots", [{"ts": pd.Timestamp("2026-11-30T07:00:00Z"), "pod": "p", "namespace": "n"}])
    assert snaps.to_pylist()[0]["ts"] == datetime(2026, 11, 30, 7, tzinfo=timezone.utc)


def test_structured_values_become_json_and_strings_are_scrubbed():
    t = to_arrow("failure_records", [{"scenario": "oom", "events": [{"reason": "OOMKilled"}],
                                      "operator_visible": "kubectl with Authorization: Bearer abcdef123"}])
    row = t.to_pylist()[0]
    assert row["events"] == '[{"reason": "OOMKilled"}]'
    assert "abcdef123" not in row["operator_visible"]


def test_a_pandas_frame_with_numpy_scalars_is_accepted():
    import pandas as pd

    df = pd.DataFrame({"bucket": pd.to_datetime(["2026-11-30T07:00:00Z", "2026-11-30T07:01:00Z"]),
                       "namespace": ["team-nlp", "team-nlp"], "util_avg": [71.5, None], "samples": [12, 11]})
    t = to_arrow("utilization", df)
    rows = t.to_pylist()
    assert rows[0]["samples"] == 12 and rows[1]["util_avg"] is None
    assert rows[1]["bucket"] == datetime(2026, 11, 30, 7, 1, tzinfo=timezone.utc)


def test_a_frame_with_bad_values_names_the_column():
    import pandas as pd

    with pytest.raises(EvidenceSchemaError, match=r"utilization\.samples: expected integers"):
        to_arrow("utilization", pd.DataFrame({"bucket": ["2026-11-30T07:00:00Z"], "samples": ["many"]}))
    with pytest.raises(EvidenceSchemaError, match=r"utilization\[1\]\.bucket: required"):
        to_arrow("utilization", pd.DataFrame({"bucket": [pd.Timestamp("2026-11-30", tz="UTC"), pd.NaT]}))
    with pytest.raises(EvidenceSchemaError, match=r"unknown column\(s\) \['gpu'\]"):
        to_arrow("utilization", pd.DataFrame({"bucket": [pd.Timestamp("2026-11-30", tz="UTC")], "gpu": [0]}))
    with pytest.raises(EvidenceSchemaError, match=r"explanations\.explained: expected true/false"):
        to_arrow("explanations", pd.DataFrame({"pod": ["p"], "explained": ["yes"]}))


def test_a_frame_and_the_same_rows_give_the_same_table():
    import pandas as pd

    rows = [{"pod": "p1", "namespace": "team-nlp", "explained": True, "ahead_count": 2,
             "platform_message": "token: abc123"},
            {"pod": "p2", "namespace": None, "explained": False, "ahead_count": None, "platform_message": None}]
    from_rows = to_arrow("explanations", rows)
    from_frame = to_arrow("explanations", pd.DataFrame(rows))
    assert from_frame.equals(from_rows)
    assert "abc123" not in str(from_frame.to_pylist())


def test_a_large_frame_converts_every_row_to_the_tables_types():
    """200,000 buckets, a week of a large cluster's utilization (bench/evidence_tables.py times it)."""
    import numpy as np
    import pandas as pd

    n = 200_000
    df = pd.DataFrame({"bucket": pd.date_range("2026-11-30", periods=n, freq="15s", tz="UTC"),
                       "namespace": np.where(np.arange(n) % 2, "team-nlp", "team-vision"),
                       "util_avg": np.random.default_rng(0).uniform(0, 100, n), "samples": np.full(n, 4)})
    t = to_arrow("utilization", df)
    assert t.num_rows == n and t.schema.equals(schema("utilization"))
    last = t.slice(n - 1).to_pylist()[0]
    assert (last["namespace"], last["samples"]) == ("team-nlp", 4) and last["util_avg"] == df["util_avg"].iloc[-1]
    assert last["bucket"] == df["bucket"].iloc[-1].to_pydatetime()


def test_platform_rows_flatten_nested_facts():
    from gpupoc.evidence import platform_rows

    rows = platform_rows({"version": {"gitVersion": "v1.31.4", "platform": "linux/amd64"},
                          "adapter": "kube-scheduler", "gpu_models": ["NVIDIA H100 80GB HBM3", "NVIDIA L40S"],
                          "kueue": None}, source="/version")
    assert [(r.key, r.value) for r in rows] == [
        ("adapter", "kube-scheduler"), ("gpu_models", '["NVIDIA H100 80GB HBM3", "NVIDIA L40S"]'),
        ("kueue", None), ("version.gitVersion", "v1.31.4"), ("version.platform", "linux/amd64")]
    assert to_arrow("platform_info", rows).num_rows == 5
