"""Stopping and starting a KWOK node's heartbeat: the node must be a KWOK node, its Lease is taken over with a
new renewTime (else v1.37's node lifecycle controller never marks it unreachable) and the annotation flipped;
starting puts the annotation back and hands the Lease back to kwok by deleting it."""

from __future__ import annotations

import json
import subprocess
from datetime import datetime, timezone

import pytest

from gpupoc.controlplane import node_heartbeat as H
from gpupoc.exceptions import GpupocError

NOW = datetime(2026, 12, 6, 13, 0, 0, 123456, tzinfo=timezone.utc)


class FakeKubectl:
    """Answers ``get node``/``get lease`` from dicts, records every call, fails the verbs it is told to."""

    def __init__(self, node: dict | None, lease: dict | None = None, failing: tuple[str, ...] = ()):
        self.node, self.lease, self.failing, self.calls = node, lease, failing, []

    def __call__(self, *args: str, check: bool = True):
        self.calls.append(args)
        if args[0] in self.failing:
            return subprocess.CompletedProcess(args, 1, "", f"Error from server: {args[0]} refused")
        if args[:2] == ("get", "node"):
            return self._obj(self.node, f'nodes "{args[2]}" not found')
        if args[:2] == ("get", "lease"):
            return self._obj(self.lease, f'leases "{args[2]}" not found')
        return subprocess.CompletedProcess(args, 0, "", "")

    @staticmethod
    def _obj(obj, missing):
        if obj is None:
            return subprocess.CompletedProcess((), 1, "", f"Error from server (NotFound): {missing}")
        return subprocess.CompletedProcess((), 0, json.dumps(obj), "")


def kwok_node(value: str = "fake") -> dict:
    return {"metadata": {"name": "training-node-1", "annotations": {"kwok.x-k8s.io/node": value}}}


def test_stopping_takes_the_lease_with_a_new_renew_time_and_flips_the_annotation():
    k = FakeKubectl(kwok_node())
    change = H.stop_heartbeat(k, "training-node-1", now=NOW)
    assert ("annotate", "node", "training-node-1", "kwok.x-k8s.io/node=stopped", "--overwrite") in k.calls
    [patch] = [c for c in k.calls if c[0] == "patch"]
    assert patch[:5] == ("patch", "lease", "training-node-1", "-n", "kube-node-lease")
    spec = json.loads(patch[-1])["spec"]
    assert spec == {"holderIdentity": "gpupoc-node-stop", "leaseDurationSeconds": 86400,
                    "renewTime": "2026-12-06T13:00:00.123456Z"}
    assert ("annotate", "pods", "--all-namespaces", "--overwrite", "--field-selector=spec.nodeName="
            "training-node-1", "gpupoc.io/node-stopped=true") == k.calls[-1], "kwok leaves the node's pods alone"
    assert change.action == "stopped" and "training-node-1" in change.line()


def test_a_node_that_is_not_kwoks_is_refused_with_the_way_to_stop_a_real_kubelet():
    with pytest.raises(H.NodeNotKwok, match="not a KWOK node.*systemctl stop kubelet"):
        H.stop_heartbeat(FakeKubectl({"metadata": {"name": "gpu-1", "annotations": {}}}), "gpu-1", now=NOW)
    with pytest.raises(H.NodeNotKwok, match="'nope'.*not found.*kubectl get nodes"):
        H.stop_heartbeat(FakeKubectl(None), "nope", now=NOW)


def test_a_lease_that_cannot_be_taken_leaves_the_node_managed():
    k = FakeKubectl(kwok_node(), failing=("patch",))
    with pytest.raises(GpupocError, match="could not be taken over.*wait until the node is Ready"):
        H.stop_heartbeat(k, "training-node-1", now=NOW)
    assert k.calls[-1] == ("annotate", "node", "training-node-1", "kwok.x-k8s.io/node=fake", "--overwrite")


def test_starting_restores_the_annotation_and_deletes_the_taken_lease():
    k = FakeKubectl(kwok_node("stopped"), {"spec": {"holderIdentity": "gpupoc-node-stop"}})
    change = H.start_heartbeat(k, "training-node-1")
    assert ("annotate", "node", "training-node-1", "kwok.x-k8s.io/node=fake", "--overwrite") in k.calls
    assert ("delete", "lease", "training-node-1", "-n", "kube-node-lease", "--ignore-not-found") in k.calls
    assert k.calls[-1][-1] == "gpupoc.io/node-stopped-", "kwok plays the node's pods again"
    assert change.action == "started" and "released to kwok" in change.detail


def test_starting_a_node_kwok_still_holds_leaves_its_lease_alone():
    k = FakeKubectl(kwok_node(), {"spec": {"holderIdentity": "kwok-controller-1"}})
    change = H.start_heartbeat(k, "training-node-1")
    assert not [c for c in k.calls if c[0] == "delete"] and "was not stopped" in change.detail


def test_a_directory_without_a_control_plane_names_the_command_that_starts_one(tmp_path):
    with pytest.raises(GpupocError, match="no control plane under .*gpupoc controlplane up --dir"):
        H.control_plane_at(tmp_path / "cp")
