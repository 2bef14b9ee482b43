"""RunContext: every task of a run finds the same paths from (plan, dag id, run id, class), the administrator
as the audit log names it, and deadlines that grow with what the run waits for."""

from __future__ import annotations

import json

from gpupoc.plan.overrides import planned_seconds
from gpupoc.steps.context import DEFAULT_ADMIN_USER, RunContext, run_context

from .conftest import RUN_ID, TC, write_plan


def test_two_tasks_of_one_run_find_the_same_run_directory(make_ctx, tmp_path):
    a, b = make_ctx(task="observe"), make_ctx(task="collect_evidence")
    assert a.run_dir == b.run_dir and a.run_dir.is_relative_to(tmp_path / "evidence")
    assert a.run_dir != RunContext(a.plan_file, a.dag_id, "another-run", TC).run_dir
    assert a.files("release") == a.run_dir / "files" / "release.json"


def test_a_task_s_context_takes_its_class_from_the_dag_and_its_plan_as_the_form_gave_it(make_ctx, monkeypatch):
    a = make_ctx(task="observe")
    b = run_context(a.plan_file, a.dag_id, a.run_id, task="observe")
    assert (b.test_class, b.task, b.run_dir) == (TC, "observe", a.run_dir)
    ref = run_context(f"{a.plan_file}#kueue", a.dag_id, a.run_id)
    assert ref.plan_file == f"{a.plan_file}#kueue", "a plan reference keeps its platform"
    monkeypatch.setenv("GPUPOC_PLAN", a.plan_file)
    assert run_context(None, a.dag_id, a.run_id).plan_file == a.plan_file, "no plan given: the default plan"


def test_a_file_one_task_writes_another_reads_and_a_missing_one_reads_as_the_default(make_ctx):
    writer, reader = make_ctx(task="release_gate"), make_ctx(task="collect_evidence")
    assert reader.read_file("release", {"none": True}) == {"none": True}
    writer.writer.write_json("release", {"found": 3})
    assert reader.read_file("release") == {"found": 3}


def test_each_task_writes_its_own_ledger_file(make_ctx):
    assert make_ctx(task="observe").ledger.path.name == "observe.jsonl"
    assert make_ctx(task="").ledger.path.name == "task.jsonl"


def test_the_administrator_is_who_the_cluster_said_and_kubeadm_s_admin_before_it_said(make_ctx):
    ctx = make_ctx()
    assert ctx.admin_actor().username == DEFAULT_ADMIN_USER and ctx.admin_actor().context == "admin"
    ctx.writer.write_json("identity", {"username": "oidc:alice", "groups": ["platform-admins"]})
    actor = make_ctx().admin_actor()
    assert (actor.username, actor.groups) == ("oidc:alice", ("platform-admins",))


def test_a_plan_run_in_cluster_without_an_admin_context_is_the_in_cluster_account(tmp_path):
    def in_cluster(d):
        d["platform"].update(admin_context=None, in_cluster=True, simulated=True)  # the sim node injector stays
        d["platform"].pop("kubeconfig")

    plan = write_plan(tmp_path, change=in_cluster)
    assert RunContext(str(plan), f"poc_{TC}", RUN_ID, TC).admin_context == "in-cluster"


def test_clients_are_made_for_the_administrator_and_each_tenant_s_context(make_ctx):
    ctx = make_ctx()
    ctx.admin("read").call("GET", "/api/v1/namespaces/team-nlp/pods")
    ctx.tenant("team-nlp", "probe").call("GET", "/api/v1/namespaces/team-vision/pods")
    assert ctx.factory.contexts == ["admin", ctx.plan.tenant("team-nlp").kube_context]
    entries = ctx.ledger.entries
    assert [(e.username, e.purpose) for e in entries] == [
        (DEFAULT_ADMIN_USER, "read"), ("system:serviceaccount:team-nlp:" + ctx.plan.tenant("team-nlp").service_account,
                                       "probe")]


def test_the_run_covers_every_tenant_namespace_once_and_selects_only_its_own_pods(make_ctx):
    ctx = make_ctx()
    assert ctx.namespaces == sorted({t.namespace for t in ctx.plan.tenants})
    assert "manual__2026-12-01T09" in ctx.selector and TC in ctx.selector


def test_the_wave_items_are_the_operator_s_items(make_ctx):
    ctx = make_ctx()
    assert [i.name for i in ctx.wave_items()] == [i["workload_key"] for i in ctx.items] and ctx.items


def test_the_hold_deadline_is_the_longest_wait_plus_the_longest_workload(make_ctx):
    ctx = make_ctx()
    longest = max(planned_seconds(ctx.plan, i) for i in ctx.wave_items())
    assert ctx.hold_timeout_s() == ctx.plan.longest_acceptable_wait_seconds() + longest + 120


def test_the_observer_waits_longer_for_every_resubmission_the_plan_allows(tmp_path):
    def limit(n):
        def change(d):
            d["test_classes"][TC]["resubmission"]["limit"] = n
        return RunContext(str(write_plan(tmp_path / str(n), change=change)), f"poc_{TC}", RUN_ID, TC)

    none, two = limit(0), limit(2)
    longest = max(planned_seconds(two.plan, i) for i in two.wave_items())
    wait = two.spec.resubmission.wait_seconds
    assert two.observe_timeout_s() - none.observe_timeout_s() == 2 * (wait + longest)
    assert none.observe_timeout_s() == none.spec.gate_timeout_seconds + none.hold_timeout_s()


def test_submissions_are_read_back_in_file_order(make_ctx):
    ctx = make_ctx()
    assert ctx.submissions() == []
    for n, item in ((2, "b"), (1, "a")):
        ctx.writer.write_json(f"submission-{item}-{n}", {"item": item, "pod": f"{item}-x", "namespace": "team-nlp",
                                                           "try_number": n, "at": "2026-12-01T09:00:00Z"})
    assert [s.item for s in ctx.submissions()] == ["a", "b"]


def _pod(ns: str, name: str, phase: str) -> dict:
    return {"metadata": {"namespace": ns, "name": name}, "status": {"phase": phase}}


def test_held_pods_are_read_once_with_the_cluster_s_current_state_over_the_observer_s(make_ctx):
    ctx = make_ctx(task="collect_evidence")
    ctx.writer.write_json("observed_pods", [_pod("a", "gone", "Failed"), _pod("a", "kept", "Running")])
    assert ctx.observed_pods()[("a", "kept")]["status"]["phase"] == "Running"
    ctx.hold_observed_pods([_pod("a", "kept", "Succeeded"), _pod("b", "new", "Pending")])
    ctx.writer.write_json("observed_pods", [])  # no longer read: the held pods answer
    held = ctx.observed_pods()
    assert {k: p["status"]["phase"] for k, p in held.items()} == {
        ("a", "gone"): "Failed", ("a", "kept"): "Succeeded", ("b", "new"): "Pending"}
    assert ctx.observed_pods() is held


def test_pods_are_known_as_observed_only_when_they_are_the_held_objects_in_their_order(make_ctx):
    ctx = make_ctx(task="collect_evidence")
    ctx.writer.write_json("observed_pods", [_pod("a", "p", "Succeeded"), _pod("a", "q", "Failed")])
    assert not ctx.holds_as_observed([_pod("a", "p", "Succeeded"), _pod("a", "q", "Failed")]), "nothing held yet"
    ctx.hold_observed_pods([])
    held = list(ctx.observed_pods().values())
    assert ctx.holds_as_observed(held)
    assert not ctx.holds_as_observed(held[::-1]), "another order is another document"
    assert not ctx.holds_as_observed(held[:1]), "a pod fewer is another document"
    assert not ctx.holds_as_observed([dict(p) for p in held]), "equal objects may have changed since: not known"
    ctx.hold_observed_pods([_pod("a", "q", "Succeeded")])
    assert not ctx.holds_as_observed(held), "a pod the cluster changed is no longer the one saved"


def test_a_context_that_holds_nothing_reads_the_observer_s_file_each_time(make_ctx):
    ctx = make_ctx(task="wave")
    ctx.writer.write_json("observed_pods", [_pod("a", "p", "Pending")])
    assert ctx.observed_pods()[("a", "p")]["status"]["phase"] == "Pending"
    ctx.writer.write_json("observed_pods", [_pod("a", "p", "Running")])
    assert ctx.observed_pods()[("a", "p")]["status"]["phase"] == "Running"
