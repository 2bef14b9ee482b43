"""The control plane is started once every KWOK node is Ready and no longer tainted not-ready."""

from gpupoc.controlplane.plane import node_ready

READY = {"conditions": [{"type": "Ready", "status": "True"}]}


def test_a_ready_node_still_tainted_not_ready_is_not_ready_yet():
    tainted = {"spec": {"taints": [{"key": "node.kubernetes.io/not-ready", "effect": "NoSchedule"}]},
               "status": READY}
    assert not node_ready(tainted)


def test_a_ready_node_with_only_its_pools_taints_is_ready():
    node = {"spec": {"taints": [{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]}, "status": READY}
    assert node_ready(node)


def test_a_node_without_a_true_ready_condition_is_not_ready():
    assert not node_ready({"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}})
    assert not node_ready({})
