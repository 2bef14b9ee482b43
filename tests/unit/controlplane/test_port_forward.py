"""kwok's PortForward: its CRD, one object per pod, and the loopback address each pod's process listens on."""

from __future__ import annotations

import ipaddress

from gpupoc.controlplane.port_forward import pod_address, portforward_crd, portforward_object


def test_each_pod_listens_on_a_loopback_address_of_its_own_never_a_private_one():
    addresses = {pod_address(f"uid-{i}") for i in range(200)}
    assert len(addresses) == 200
    for a in addresses:
        ip = ipaddress.ip_address(a)
        assert ip.is_loopback and not a.startswith("127.0.0."), a
    assert pod_address("same") == pod_address("same")


def test_the_object_forwards_each_container_port_to_the_same_port_on_the_pods_address():
    obj = portforward_object("team-serving", "svc-0", "127.9.8.7", [9090, 8080])
    assert obj["kind"] == "PortForward" and obj["metadata"] == {"name": "svc-0", "namespace": "team-serving"}
    assert obj["spec"]["forwards"] == [{"ports": [8080], "target": {"address": "127.9.8.7", "port": 8080}},
                                       {"ports": [9090], "target": {"address": "127.9.8.7", "port": 9090}}]


def test_the_crd_is_kwoks_namespaced_portforward_requiring_forwards():
    crd = portforward_crd()
    spec = crd["spec"]
    assert crd["metadata"]["name"] == "portforwards.kwok.x-k8s.io" and spec["scope"] == "Namespaced"
    schema = spec["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert schema["required"] == ["forwards"]
    assert schema["properties"]["forwards"]["items"]["properties"]["target"]["required"] == ["address", "port"]
