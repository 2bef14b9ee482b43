"""Label and field selectors as the API server parses them (KPO and kubectl depend on these)."""

import pytest
from gpupoc.sim.selectors import Selector, SelectorError, parse_label_selector


def pod(name="p", ns="team-a", labels=None, node=None, phase="Pending"):
    return {"metadata": {"name": name, "namespace": ns, "labels": labels or {}},
            "spec": {"nodeName": node} if node else {}, "status": {"phase": phase}}


def sel(labels=None, fields=None, resource="pods"):
    return Selector.parse(resource, labels, fields)


def test_kpo_selector_matches_pod_without_already_checked_and_worker_labels():
    s = sel("dag_id=d,kubernetes_pod_operator=True,already_checked!=True,!airflow-worker")
    assert s.matches(pod(labels={"dag_id": "d", "kubernetes_pod_operator": "True"}))
    assert not s.matches(pod(labels={"dag_id": "d", "kubernetes_pod_operator": "True", "already_checked": "True"}))
    assert not s.matches(pod(labels={"dag_id": "d", "kubernetes_pod_operator": "True", "airflow-worker": "1"}))
    assert s.matches(pod(labels={"dag_id": "d", "kubernetes_pod_operator": "True", "already_checked": "False"}))


def test_double_equals_is_equality():
    assert sel("app==web").matches(pod(labels={"app": "web"}))
    assert not sel("app==web").matches(pod(labels={"app": "db"}))


def test_set_based_in_and_notin():
    s = sel("tier in (gold, silver),env notin (dev)")
    assert s.matches(pod(labels={"tier": "gold", "env": "prod"}))
    assert s.matches(pod(labels={"tier": "silver"}))
    assert not s.matches(pod(labels={"tier": "bronze"}))
    assert not s.matches(pod(labels={"tier": "gold", "env": "dev"}))


def test_exists_and_not_exists():
    assert sel("gpu").matches(pod(labels={"gpu": ""}))
    assert not sel("gpu").matches(pod())
    assert sel("!gpu").matches(pod())
    assert not sel("!gpu").matches(pod(labels={"gpu": "x"}))


def test_field_selectors_on_pods():
    p = pod(name="a", node="n1", phase="Running")
    assert sel(fields="metadata.name=a,spec.nodeName=n1,status.phase=Running").matches(p)
    assert not sel(fields="status.phase!=Running").matches(p)
    assert sel(fields="metadata.namespace=team-a").matches(p)
    assert not sel(fields="spec.nodeName=n2").matches(p)


def test_event_involved_object_fields():
    ev = {"metadata": {"name": "e", "namespace": "ns"},
          "involvedObject": {"kind": "Pod", "name": "p1", "namespace": "ns", "uid": "u1"}}
    s = sel(fields="involvedObject.name=p1,involvedObject.namespace=ns,involvedObject.uid=u1,involvedObject.kind=Pod",
            resource="events")
    assert s.matches(ev)
    assert not sel(fields="involvedObject.name=p2", resource="events").matches(ev)


def test_unknown_field_is_refused_like_the_api():
    with pytest.raises(SelectorError, match="field label not supported: spec.foo"):
        sel(fields="spec.foo=bar")


def test_bad_label_key_is_refused():
    with pytest.raises(SelectorError):
        parse_label_selector("a b=c")


def test_exact_name_lets_list_skip_a_scan():
    assert sel(fields="metadata.name=x").exact_name() == "x"
    assert sel(fields="metadata.name!=x").exact_name() is None
