"""Server-side Table printing for kubectl get: columns, STATUS logic, ages."""

from datetime import timedelta

from gpupoc.sim import clock
from gpupoc.sim.tables import human_duration, node_status, pod_status_reason, to_table


def ago(seconds):
    return clock.rfc3339(clock.now() - timedelta(seconds=seconds))


def running_pod(**status):
    return {"metadata": {"name": "p", "namespace": "ns", "creationTimestamp": ago(30)},
            "spec": {"containers": [{"name": "base"}], "nodeName": "n1"},
            "status": {"phase": "Running", "podIP": "10.0.0.5",
                       "containerStatuses": [{"name": "base", "ready": True, "restartCount": 0,
                                              "state": {"running": {}}}], **status}}


def test_human_duration_matches_apimachinery():
    assert human_duration(45) == "45s"
    assert human_duration(119) == "119s"
    assert human_duration(192) == "3m12s"
    assert human_duration(600) == "10m"
    assert human_duration(5 * 3600 + 3 * 60) == "5h3m"
    assert human_duration(20 * 3600) == "20h"
    assert human_duration(2 * 86400 + 4 * 3600) == "2d4h"
    assert human_duration(-5) == "<invalid>"


def test_pod_row_cells_and_wide_columns():
    t = to_table("pods", [running_pod()], "42")
    names = [c["name"] for c in t["columnDefinitions"]]
    assert names[:5] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert [c["priority"] for c in t["columnDefinitions"]][5:] == [1, 1, 1, 1]
    cells = t["rows"][0]["cells"]
    assert cells[:4] == ["p", "1/1", "Running", "0"]
    assert cells[5:7] == ["10.0.0.5", "n1"]
    assert t["rows"][0]["object"]["kind"] == "PartialObjectMetadata"
    assert t["metadata"]["resourceVersion"] == "42"


def test_include_object_none_and_object():
    assert "object" not in to_table("pods", [running_pod()], "1", "None")["rows"][0]
    assert to_table("pods", [running_pod()], "1", "Object")["rows"][0]["object"]["status"]["phase"] == "Running"


def test_pod_status_shows_waiting_reason_and_terminated_reason():
    p = running_pod()
    p["status"]["containerStatuses"][0]["state"] = {"waiting": {"reason": "ImagePullBackOff"}}
    assert pod_status_reason(p) == "ImagePullBackOff"
    p["status"]["containerStatuses"][0]["state"] = {"terminated": {"reason": "OOMKilled", "exitCode": 137}}
    assert pod_status_reason(p) == "OOMKilled"
    p["status"]["containerStatuses"][0]["state"] = {"terminated": {"exitCode": 3}}
    assert pod_status_reason(p) == "ExitCode:3"


def test_pod_status_terminating_and_gated():
    p = running_pod()
    p["metadata"]["deletionTimestamp"] = ago(0)
    assert pod_status_reason(p) == "Terminating"
    gated = {"metadata": {"name": "g"}, "spec": {"containers": [{"name": "base"}]},
             "status": {"phase": "Pending", "conditions": [{"type": "PodScheduled", "status": "False",
                                                            "reason": "SchedulingGated"}]}}
    assert pod_status_reason(gated) == "SchedulingGated"


def test_node_status_with_cordon_and_not_ready():
    node = {"metadata": {"name": "n"}, "spec": {"unschedulable": True},
            "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    assert node_status(node) == "Ready,SchedulingDisabled"
    node["status"]["conditions"][0]["status"] = "Unknown"
    node["spec"] = {}
    assert node_status(node) == "NotReady"


def test_event_row_object_and_count():
    ev = {"metadata": {"name": "p.1", "namespace": "ns"}, "type": "Warning", "reason": "FailedScheduling",
          "message": "0/8 nodes are available", "involvedObject": {"kind": "Pod", "name": "p"},
          "firstTimestamp": ago(300), "lastTimestamp": ago(10), "count": 3,
          "source": {"component": "default-scheduler"}}
    t = to_table("events", [ev], "5")
    visible = [c["name"] for c in t["columnDefinitions"] if c["priority"] == 0]
    assert visible == ["Last Seen", "Type", "Reason", "Object", "Message"]
    cells = t["rows"][0]["cells"]
    assert cells[0].startswith("10s (x3 over 5m")
    assert cells[3] == "pod/p"


def test_resourcequota_request_and_limit_columns():
    rq = {"metadata": {"name": "q", "creationTimestamp": ago(5)},
          "spec": {"hard": {"requests.nvidia.com/gpu": "8", "pods": "10", "limits.memory": "1Gi"}},
          "status": {"used": {"requests.nvidia.com/gpu": "2", "pods": "1", "limits.memory": "0"}}}
    cells = to_table("resourcequotas", [rq], "1")["rows"][0]["cells"]
    assert cells[2] == "pods: 1/10, requests.nvidia.com/gpu: 2/8"
    assert cells[3] == "limits.memory: 0/1Gi"


def test_generic_table_is_name_and_age():
    t = to_table("roles", [{"metadata": {"name": "c", "creationTimestamp": ago(3)}}], "1")
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "Age"]
    assert t["rows"][0]["cells"][0] == "c"


def test_priorityclass_columns_like_kubectl():
    pc = {"metadata": {"name": "hi", "creationTimestamp": ago(3)}, "value": 1000, "globalDefault": True,
          "preemptionPolicy": "Never"}
    t = to_table("priorityclasses", [pc], "1")
    assert [c["name"] for c in t["columnDefinitions"]] == ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"]
    assert t["rows"][0]["cells"] == ["hi", 1000, True, "3s", "Never"]


def test_queues_and_podgroups_print_each_projects_columns():
    from gpupoc.sim.tables import to_table

    volcano_pg = {"apiVersion": "scheduling.volcano.sh/v1beta1", "kind": "PodGroup",
                  "metadata": {"name": "g", "creationTimestamp": "2026-01-01T00:00:00Z"},
                  "spec": {"minMember": 4, "queue": "q"}, "status": {"phase": "Inqueue", "running": 1}}
    table = to_table("podgroups", [volcano_pg], "1")
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "STATUS", "minMember", "RUNNINGS", "AGE",
                                                                "QUEUE"]
    assert table["rows"][0]["cells"][:4] == ["g", "Inqueue", 4, 1]
    kai_queue = {"apiVersion": "scheduling.run.ai/v2", "kind": "Queue", "metadata": {"name": "t"},
                 "spec": {"priority": 100, "parentQueue": "root", "displayName": "T"}, "status": {}}
    table = to_table("queues", [kai_queue], "1")
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Priority", "Parent", "Children",
                                                                "DisplayName"]
    assert table["rows"][0]["cells"] == ["t", "100", "root", "", "T"]
    kai_pg = {**volcano_pg, "apiVersion": "scheduling.run.ai/v2alpha2"}
    assert [c["name"] for c in to_table("podgroups", [kai_pg], "1")["columnDefinitions"]] == ["Name", "Age"]
