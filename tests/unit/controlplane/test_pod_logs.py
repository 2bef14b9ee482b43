"""Container logs in the CRI format kwok's kubelet API reads, and the Logs object naming them."""

from __future__ import annotations

import datetime as dt

from gpupoc.controlplane.pod_logs import append_log, cri_line, logs_object

AT = dt.datetime(2026, 12, 6, 5, 16, 35, 100000, tzinfo=dt.timezone.utc)


def test_a_line_is_in_cri_format():
    assert cri_line(AT, "step=100") == "2026-12-06T05:16:35.100000000Z stdout F step=100\n"


def test_lines_are_appended_per_container(tmp_path):
    path = append_log(tmp_path, "team-a", "p1", ["one", "two"], at=AT)
    append_log(tmp_path, "team-a", "p1", ["three"], at=AT)
    assert path == tmp_path / "team-a" / "p1" / "base.log"
    assert [line.split(" ", 3)[3] for line in path.read_text().splitlines()] == ["one", "two", "three"]


def test_the_logs_object_names_each_containers_file(tmp_path):
    obj = logs_object("team-a", "p1", {"base": tmp_path / "base.log", "side": tmp_path / "side.log"})
    assert obj["kind"] == "Logs" and obj["metadata"] == {"name": "p1", "namespace": "team-a"}
    assert [(entry["containers"], entry["logsFile"]) for entry in obj["spec"]["logs"]] == [
        (["base"], str(tmp_path / "base.log")), (["side"], str(tmp_path / "side.log"))]


def test_the_logs_crd_serves_the_kind_kwok_reads():
    from gpupoc.controlplane.pod_logs import logs_crd

    crd = logs_crd()
    assert crd["metadata"]["name"] == "logs.kwok.x-k8s.io" and crd["spec"]["scope"] == "Namespaced"
    version = crd["spec"]["versions"][0]
    assert (crd["spec"]["names"]["kind"], version["name"], version["served"]) == ("Logs", "v1alpha1", True)
    assert set(version["schema"]["openAPIV3Schema"]["properties"]["spec"]["properties"]["logs"]["items"]
               ["properties"]) == {"containers", "logsFile", "previousLogsFile", "follow"}
