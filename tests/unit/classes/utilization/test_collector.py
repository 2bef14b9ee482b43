"""The utilization class's vGPU slices table: written from HAMi's series, nothing without slices, not verified when
Prometheus cannot be asked."""

from __future__ import annotations

from types import SimpleNamespace

from gpupoc.exceptions import SourceUnavailable
from gpupoc.evidence.schema import to_arrow
from gpupoc.classes.utilization.collector import write_vgpu_utilization

from tests.unit.monitoring.test_monitoring_slices import WINDOW, FakeProm, data


class Writer:
    def __init__(self):
        self.tables, self.unverified = {}, {}

    def write(self, table, rows, source=""):
        self.tables[table] = (rows, source)

    def mark_not_verified(self, table, reason, source):
        self.unverified[table] = reason


def ctx() -> SimpleNamespace:
    return SimpleNamespace(writer=Writer(), plan=SimpleNamespace(tenants=[
        SimpleNamespace(name="team-serving", namespace="team-serving")]))


def test_slices_are_written_with_tenant_and_task_type_in_the_tables_schema():
    c = ctx()
    out = write_vgpu_utilization(c, FakeProm(data()), WINDOW, 60, {"b": "inference"})
    rows, source = c.writer.tables["vgpu_utilization"]
    assert out["vgpu_slices"] == 2 and "hami_vgpu_memory_allocated_bytes" in source
    by = {r["pod"]: r for r in rows}
    assert by["b"]["tenant"] == "team-serving" and by["b"]["task_type"] == "inference" and by["b"]["share"] == 0.4
    assert to_arrow("vgpu_utilization", rows).num_rows == 2  # the rows fit the evidence table


def test_no_slices_write_nothing_and_an_unreachable_prometheus_is_not_verified():
    c = ctx()
    assert write_vgpu_utilization(c, FakeProm({}), WINDOW, 60, {}) == {"vgpu_slices": 0}
    assert c.writer.tables == {} and c.writer.unverified == {}

    class Down(FakeProm):
        def query_range(self, expr, start, end, step):
            raise SourceUnavailable(f"{self.url}/api/v1/query_range", "unreachable", "start it")

    out = write_vgpu_utilization(c, Down({}), WINDOW, 60, {})
    assert out == {"vgpu_slices": None} and "vGPU slice samples not collected" in c.writer.unverified["vgpu_utilization"]
