"""Kueue's rendered objects fitted to a local process: no Deployment or ConfigMap; Services resolve to localhost;
every webhook and conversion webhook goes to the local port, the visibility APIServices to the visibility
server's; the configuration binds loopback."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpupoc.controlplane.kueue_manifests import (KueuePorts, configuration, fit_for_local_process, kueue_argv,
                                                 render)
from gpupoc.exceptions import GpupocError

SERVICE_REF = {"service": {"name": "kueue-webhook-service", "namespace": "kueue-system", "path": "/convert"}}
RENDERED = [
    {"kind": "Namespace", "metadata": {"name": "kueue-system"}},
    {"kind": "Deployment", "metadata": {"name": "kueue-controller-manager"}},
    {"kind": "ConfigMap", "metadata": {"name": "kueue-manager-config"}},
    {"kind": "APIService", "metadata": {"name": "v1beta2.visibility.kueue.x-k8s.io"},
     "spec": {"service": {"name": "kueue-visibility-server", "namespace": "kueue-system"}}},
    {"kind": "Service", "metadata": {"name": "kueue-webhook-service"},
     "spec": {"ports": [{"port": 443, "targetPort": 9443}], "selector": {"control-plane": "controller-manager"}}},
    {"kind": "CustomResourceDefinition", "metadata": {"name": "workloads.kueue.x-k8s.io"},
     "spec": {"conversion": {"strategy": "Webhook", "webhook": {"clientConfig": dict(SERVICE_REF)}}}},
    {"kind": "CustomResourceDefinition", "metadata": {"name": "topologies.kueue.x-k8s.io"}, "spec": {}},
    {"kind": "ValidatingWebhookConfiguration", "metadata": {"name": "v"},
     "webhooks": [{"name": "vpod.kb.io", "clientConfig": {"service": {"name": "kueue-webhook-service",
                                                                      "path": "/validate--v1-pod"}}}]},
    {"kind": "MutatingWebhookConfiguration", "metadata": {"name": "m"},
     "webhooks": [{"name": "mpod.kb.io", "clientConfig": {"service": {"name": "kueue-webhook-service",
                                                                      "path": "/mutate--v1-pod"}}}]},
]


def test_the_visibility_api_services_go_to_the_visibility_port():
    fitted = fit_for_local_process(RENDERED, 31000, 31003)
    service = next(d for d in fitted if d["kind"] == "APIService")["spec"]["service"]
    assert service["port"] == 31003
    assert "port" not in RENDERED[3]["spec"]["service"]


def test_the_deployment_config_map_and_api_services_are_dropped_without_a_visibility_port():
    kinds = [d["kind"] for d in fit_for_local_process(RENDERED, 31000)]
    assert kinds == ["Namespace", "Service", "CustomResourceDefinition", "CustomResourceDefinition",
                     "ValidatingWebhookConfiguration", "MutatingWebhookConfiguration"]


def test_each_service_resolves_to_localhost():
    service = next(d for d in fit_for_local_process(RENDERED, 31000) if d["kind"] == "Service")
    assert service["spec"] == {"type": "ExternalName", "externalName": "localhost"}


def test_every_webhook_and_conversion_webhook_calls_the_local_port():
    fitted = fit_for_local_process(RENDERED, 31000)
    hooks = [h["clientConfig"]["service"] for d in fitted for h in d.get("webhooks") or []]
    conversion = fitted[2]["spec"]["conversion"]["webhook"]["clientConfig"]["service"]
    assert [h["port"] for h in hooks] == [31000, 31000] and conversion["port"] == 31000
    assert conversion["path"] == "/convert" and hooks[0]["path"] == "/validate--v1-pod"
    assert "conversion" not in fitted[3]["spec"]


def test_the_rendered_objects_are_left_unchanged():
    fit_for_local_process(RENDERED, 31000)
    assert "port" not in RENDERED[5]["spec"]["conversion"]["webhook"]["clientConfig"]["service"]
    assert RENDERED[4]["spec"]["selector"] == {"control-plane": "controller-manager"}


def test_the_configuration_binds_loopback_and_manages_its_certificates(tmp_path):
    cfg = configuration(KueuePorts(webhook=31000, health=31001, metrics=31002), tmp_path / "certs")
    assert cfg["webhook"] == {"port": 31000, "host": "127.0.0.1", "certDir": str(tmp_path / "certs")}
    assert cfg["health"]["healthProbeBindAddress"] == "127.0.0.1:31001"
    assert cfg["metrics"]["bindAddress"] == "127.0.0.1:31002"
    assert cfg["leaderElection"] == {"leaderElect": False}
    assert cfg["internalCertManagement"]["enable"] is True
    assert cfg["integrations"]["frameworks"] == ["batch/job", "pod"]


def test_the_command_line_keeps_the_visibility_server_unless_told(tmp_path):
    argv = kueue_argv(Path("/bin/kueue"), tmp_path / "kubeconfig", tmp_path / "config.yaml")
    assert argv[0] == "/bin/kueue" and not any("VisibilityOnDemand" in a for a in argv)
    assert f"--kubeconfig={tmp_path / 'kubeconfig'}" in argv and f"--config={tmp_path / 'config.yaml'}" in argv
    off = kueue_argv(Path("/bin/kueue"), tmp_path / "kubeconfig", tmp_path / "config.yaml", visibility=False)
    assert "--feature-gates=VisibilityOnDemand=false" in off


def test_the_visibility_server_binds_loopback_on_its_port(tmp_path):
    cfg = configuration(KueuePorts(webhook=31000, health=31001, metrics=31002, visibility=31003), tmp_path)
    assert cfg["visibilityServer"] == {"bindAddress": "127.0.0.1", "bindPort": 31003}
    assert "visibilityServer" not in configuration(KueuePorts(31000, 31001, 31002), tmp_path)


def test_a_module_without_its_kustomization_names_the_build_command(tmp_path):
    with pytest.raises(GpupocError, match="build.sh --with-kueue"):
        render(Path("/bin/true"), tmp_path)


def test_fair_sharing_and_wait_for_pods_ready_are_set_only_when_chosen(tmp_path):
    from gpupoc.controlplane.kueue_manifests import KueueSettings

    ports = KueuePorts(31000, 31001, 31002)
    plain = configuration(ports, tmp_path)
    assert "fairSharing" not in plain and "waitForPodsReady" not in plain
    cfg = configuration(ports, tmp_path, KueueSettings(fair_sharing=True, wait_for_pods_ready_seconds=30))
    assert cfg["fairSharing"]["preemptionStrategies"] == ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]
    assert cfg["waitForPodsReady"] == {"timeout": "30s", "blockAdmission": True}


def test_excluded_resources_are_not_accounted_only_when_named(tmp_path):
    from gpupoc.controlplane.kueue_manifests import KueueSettings

    ports = KueuePorts(31000, 31001, 31002)
    assert "resources" not in configuration(ports, tmp_path)
    cfg = configuration(ports, tmp_path, KueueSettings(exclude_resource_prefixes=("cpu", "memory")))
    assert cfg["resources"] == {"excludeResourcePrefixes": ["cpu", "memory"]}
