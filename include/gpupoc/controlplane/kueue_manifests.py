"""Kueue's objects for the real control plane, rendered from its own module (``kubectl kustomize
<module>/config/default``) and fitted to a Kueue that runs as a local process: no Deployment, no ConfigMap
(the process reads its configuration from a file), each Service an ``ExternalName`` for ``localhost`` so the
API server dials the local process, every webhook (the CRDs' conversion webhooks too) sent to the port the
process listens on, and the visibility APIServices to its visibility server's port (the API server forwards
``visibility.kueue.x-k8s.io`` to it as its front proxy, ``front_proxy``). Pure functions but ``render``."""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path

import yaml

from gpupoc.exceptions import GpupocError

NAMESPACE = "kueue-system"
SERVICE_ACCOUNT = "kueue-controller-manager"
WEBHOOK_SERVICE = "kueue-webhook-service"
WEBHOOK_SECRET = "kueue-webhook-server-cert"
DROPPED_KINDS = ("Deployment", "ConfigMap")
# the frameworks whose objects this Kueue manages: Jobs and plain pods (the pod builder's)
FRAMEWORKS = ("batch/job", "pod")


@dataclass(frozen=True)
class KueuePorts:
    """The local Kueue's loopback ports, chosen free at its first start."""

    webhook: int
    health: int
    metrics: int
    visibility: int = 0  # 0: none recorded yet (a ports.json written before the visibility API was served)


def render(kubectl: Path, module_dir: Path) -> list[dict]:
    """The objects of ``<module>/config/default`` as the module's kustomization renders them."""
    kustomization = module_dir / "config" / "default"
    if not kustomization.is_dir():
        raise GpupocError(f"Kueue's kustomization {kustomization} is absent: run `bash scripts/control-plane/"
                          "build.sh --with-kueue` (it downloads the module into the Go module cache)")
    res = subprocess.run([str(kubectl), "kustomize", str(kustomization)], capture_output=True, text=True,
                         timeout=120)
    if res.returncode != 0:
        raise GpupocError(f"kubectl kustomize {kustomization} exited {res.returncode}: {res.stderr.strip()[-400:]}")
    return [d for d in yaml.safe_load_all(res.stdout) if d]


def _service_ref(ref: dict, port: int) -> None:
    if ref.get("service"):
        ref["service"]["port"] = port


def fit_for_local_process(docs: list[dict], webhook_port: int, visibility_port: int = 0) -> list[dict]:
    """The rendered objects fitted to a local process (see the module); the input is left unchanged. Without
    a ``visibility_port`` the visibility APIServices are dropped."""
    out = []
    for doc in yaml.safe_load(yaml.safe_dump(docs)):  # a deep copy
        kind = doc.get("kind")
        if kind in DROPPED_KINDS or (kind == "APIService" and not visibility_port):
            continue
        if kind == "APIService":
            _service_ref(doc.get("spec") or {}, visibility_port)
        if kind == "Service":
            doc["spec"] = {"type": "ExternalName", "externalName": "localhost"}
        elif kind in ("MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"):
            for hook in doc.get("webhooks") or []:
                _service_ref(hook.get("clientConfig") or {}, webhook_port)
        elif kind == "CustomResourceDefinition":
            webhook = ((doc.get("spec") or {}).get("conversion") or {}).get("webhook") or {}
            _service_ref(webhook.get("clientConfig") or {}, webhook_port)
        out.append(doc)
    return out


@dataclass(frozen=True)
class KueueSettings:
    """What a plan or a scenario chooses of Kueue's ``Configuration``: fair sharing (``fairSharing``, as a
    plan's ``cluster.queues.kueue.fair_sharing``), ``waitForPodsReady`` (its timeout; 0: off) and the resources
    Kueue does not account (``resources.excludeResourcePrefixes``: a ClusterQueue must cover every other
    resource a pod asks, or its Workload waits with "resource cpu unavailable in ClusterQueue")."""

    fair_sharing: bool = False
    wait_for_pods_ready_seconds: int = 0
    exclude_resource_prefixes: tuple[str, ...] = ()

    def fields(self) -> dict:
        out: dict = {}
        if self.exclude_resource_prefixes:
            out["resources"] = {"excludeResourcePrefixes": list(self.exclude_resource_prefixes)}
        if self.fair_sharing:
            out["fairSharing"] = {"preemptionStrategies": ["LessThanOrEqualToFinalShare", "LessThanInitialShare"]}
        if self.wait_for_pods_ready_seconds:
            out["waitForPodsReady"] = {"timeout": f"{self.wait_for_pods_ready_seconds}s", "blockAdmission": True}
        return out


def configuration(ports: KueuePorts, cert_dir: Path, settings: KueueSettings = KueueSettings()) -> dict:
    """Kueue's ``Configuration``: loopback ports, no leader election, its own certificate management, and the
    ``settings`` chosen."""
    return {
        "apiVersion": "config.kueue.x-k8s.io/v1beta2", "kind": "Configuration",
        "namespace": NAMESPACE,
        "health": {"healthProbeBindAddress": f"127.0.0.1:{ports.health}"},
        "metrics": {"bindAddress": f"127.0.0.1:{ports.metrics}"},
        "webhook": {"port": ports.webhook, "host": "127.0.0.1", "certDir": str(cert_dir)},
        "leaderElection": {"leaderElect": False},
        "internalCertManagement": {"enable": True, "webhookServiceName": WEBHOOK_SERVICE,
                                   "webhookSecretName": WEBHOOK_SECRET},
        "clientConnection": {"qps": 50, "burst": 100},
        "managedJobsNamespaceSelector": {"matchExpressions": [{
            "key": "kubernetes.io/metadata.name", "operator": "NotIn", "values": ["kube-system", NAMESPACE]}]},
        "integrations": {"frameworks": list(FRAMEWORKS)},
        **({"visibilityServer": {"bindAddress": "127.0.0.1", "bindPort": ports.visibility}}
           if ports.visibility else {}),
        **settings.fields(),
    }


def kueue_argv(binary: Path, kubeconfig: Path, config: Path, visibility: bool = True) -> list[str]:
    """The local Kueue's command line (without ``visibility`` its visibility server is off)."""
    return [str(binary), f"--kubeconfig={kubeconfig}", f"--config={config}",
            *([] if visibility else ["--feature-gates=VisibilityOnDemand=false"])]
