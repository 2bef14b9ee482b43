from gpupoc.sim.api.events_v1 import core_field_selector, to_v1


def test_a_core_event_reads_as_events_k8s_io_v1():
    core = {"metadata": {"name": "p.1", "namespace": "a"}, "involvedObject": {"kind": "Pod", "name": "p"},
            "reason": "FailedScheduling", "message": "0/1 nodes are available", "type": "Warning",
            "source": {"component": "default-scheduler"}, "firstTimestamp": "t0", "lastTimestamp": "t1",
            "count": 2, "eventTime": None, "reportingComponent": "default-scheduler", "reportingInstance": ""}
    v1 = to_v1(core)
    assert v1["apiVersion"] == "events.k8s.io/v1" and v1["kind"] == "Event"
    assert v1["regarding"] == {"kind": "Pod", "name": "p"} and v1["note"] == "0/1 nodes are available"
    assert v1["reportingController"] == "default-scheduler" and v1["deprecatedCount"] == 2
    assert v1["deprecatedFirstTimestamp"] == "t0" and "eventTime" not in v1
    assert "involvedObject" not in v1 and "message" not in v1


def test_field_selectors_on_regarding_read_the_core_fields():
    assert core_field_selector("regarding.name=p,type=Warning") == "involvedObject.name=p,type=Warning"
    assert core_field_selector("reportingController=default-scheduler") == "reportingComponent=default-scheduler"
    assert core_field_selector(None) is None
