"""PATCH flavours: strategic merge (merge keys, $patch directives), RFC 7386 merge, RFC 6902 JSON patch."""

import pytest
from gpupoc.sim.patch import JSON_PATCH, MERGE, STRATEGIC, PatchError, apply_patch


def pod():
    return {
        "metadata": {"name": "p", "labels": {"a": "1", "b": "2"}, "finalizers": ["x"]},
        "spec": {
            "containers": [{"name": "base", "image": "i:1", "env": [{"name": "A", "value": "1"}]},
                           {"name": "side", "image": "s:1"}],
            "schedulingGates": [{"name": "kueue.x-k8s.io/admission"}, {"name": "other"}],
            "tolerations": [{"key": "t1", "operator": "Exists"}],
        },
        "status": {"conditions": [{"type": "PodScheduled", "status": "False"}, {"type": "Ready", "status": "False"}]},
    }


def test_strategic_merge_adds_label_and_keeps_others():
    out = apply_patch(STRATEGIC, pod(), {"metadata": {"labels": {"already_checked": "True"}}})
    assert out["metadata"]["labels"] == {"a": "1", "b": "2", "already_checked": "True"}


def test_strategic_merge_null_deletes_key():
    out = apply_patch(STRATEGIC, pod(), {"metadata": {"labels": {"a": None}}})
    assert out["metadata"]["labels"] == {"b": "2"}


def test_strategic_merge_containers_merge_by_name():
    out = apply_patch(STRATEGIC, pod(), {"spec": {"containers": [{"name": "side", "image": "s:2"}]}})
    assert [c["image"] for c in out["spec"]["containers"]] == ["i:1", "s:2"]
    assert out["spec"]["containers"][0]["env"] == [{"name": "A", "value": "1"}]


def test_strategic_merge_patch_delete_removes_one_scheduling_gate():
    out = apply_patch(STRATEGIC, pod(), {"spec": {"schedulingGates": [
        {"name": "kueue.x-k8s.io/admission", "$patch": "delete"}]}})
    assert out["spec"]["schedulingGates"] == [{"name": "other"}]


def test_strategic_merge_conditions_merge_by_type():
    out = apply_patch(STRATEGIC, pod(), {"status": {"conditions": [{"type": "Ready", "status": "True"}]}})
    assert out["status"]["conditions"] == [{"type": "PodScheduled", "status": "False"},
                                           {"type": "Ready", "status": "True"}]


def test_strategic_merge_tolerations_are_replaced():
    out = apply_patch(STRATEGIC, pod(), {"spec": {"tolerations": [{"key": "t2", "operator": "Exists"}]}})
    assert out["spec"]["tolerations"] == [{"key": "t2", "operator": "Exists"}]


def test_strategic_merge_cordon():
    node = {"metadata": {"name": "n"}, "spec": {"podCIDR": "10.0.0.0/24"}}
    out = apply_patch(STRATEGIC, node, {"spec": {"unschedulable": True}})
    assert out["spec"] == {"podCIDR": "10.0.0.0/24", "unschedulable": True}
    back = apply_patch(STRATEGIC, out, {"spec": {"unschedulable": None}})
    assert "unschedulable" not in back["spec"]


def test_strategic_merge_finalizers_merge_as_a_set():
    out = apply_patch(STRATEGIC, pod(), {"metadata": {"finalizers": ["y", "x"]}})
    assert out["metadata"]["finalizers"] == ["x", "y"]


def test_strategic_merge_item_without_merge_key_is_refused():
    with pytest.raises(PatchError, match="merge key"):
        apply_patch(STRATEGIC, pod(), {"spec": {"containers": [{"image": "x"}]}})


def test_merge_patch_replaces_lists_and_deletes_nulls():
    out = apply_patch(MERGE, pod(), {"spec": {"schedulingGates": None, "containers": [{"name": "only", "image": "o"}]}})
    assert "schedulingGates" not in out["spec"]
    assert out["spec"]["containers"] == [{"name": "only", "image": "o"}]


def test_patch_does_not_mutate_target():
    p = pod()
    apply_patch(MERGE, p, {"metadata": {"labels": None}})
    assert p["metadata"]["labels"] == {"a": "1", "b": "2"}


def test_json_patch_operations():
    out = apply_patch(JSON_PATCH, pod(), [
        {"op": "remove", "path": "/spec/schedulingGates"},
        {"op": "add", "path": "/metadata/labels/kueue.x-k8s.io~1queue-name", "value": "q"},
        {"op": "replace", "path": "/spec/containers/0/image", "value": "i:2"},
        {"op": "add", "path": "/spec/tolerations/-", "value": {"key": "t3"}},
        {"op": "test", "path": "/metadata/name", "value": "p"},
        {"op": "copy", "from": "/metadata/labels/a", "path": "/metadata/labels/c"},
        {"op": "move", "from": "/metadata/labels/b", "path": "/metadata/labels/d"},
    ])
    assert "schedulingGates" not in out["spec"]
    assert out["metadata"]["labels"] == {"a": "1", "kueue.x-k8s.io/queue-name": "q", "c": "1", "d": "2"}
    assert out["spec"]["containers"][0]["image"] == "i:2"
    assert out["spec"]["tolerations"][-1] == {"key": "t3"}


def test_json_patch_failed_test_aborts():
    with pytest.raises(PatchError, match="testing value /metadata/name failed"):
        apply_patch(JSON_PATCH, pod(), [{"op": "test", "path": "/metadata/name", "value": "other"}])


def test_json_patch_remove_missing_path_fails():
    with pytest.raises(PatchError, match="missing path"):
        apply_patch(JSON_PATCH, pod(), [{"op": "remove", "path": "/metadata/annotations"}])


def test_unknown_content_type_is_refused():
    with pytest.raises(PatchError, match="unsupported patch content type"):
        apply_patch("application/json", pod(), {})
