"""Each task's clients name its part of the harness in their User-Agent, so the API server tells them apart."""

from __future__ import annotations

from gpupoc.steps.context import RunContext, task_component


class Factory:
    def __init__(self):
        self.asked: list[tuple[str, str]] = []

    def caller(self, context: str, component: str = "") -> str:
        self.asked.append((context, component))
        return context


def test_each_task_is_the_component_its_work_is():
    assert [task_component(t) for t in ("observe", "observe_services", "collect_evidence", "bulk_shard",
                                        "release_gate", "check_access")] == [
        "observer", "observer", "collector", "submitter", "submitter", "setup"]


def test_a_class_probe_is_a_probe_and_a_context_no_task_holds_names_none():
    assert task_component("isolation_probes") == "probe" and task_component("memory_isolation_probe") == "probe"
    assert task_component("") == ""


def test_the_context_s_reader_asks_for_a_client_naming_its_task_s_component():
    factory = Factory()
    ctx = RunContext("plan.yaml", "poc_queue_congestion", "r1", "queue_congestion", task="observe")
    ctx.__dict__["factory"] = factory
    ctx.caller("admin")
    ctx.caller("team-a")
    assert factory.asked == [("admin", "observer"), ("team-a", "observer")]
