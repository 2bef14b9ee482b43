"""The objects a ``kind: service`` workload is deployed as: an ``apps/v1`` Deployment of the workload's pod
(from ``build_pod``, so the adapter's queue labels, priority, pool and resources are the same as a wave
pod's) with the serving container's port and readiness probe, a ``v1`` Service in front of it, and the load
pod that sends the workload's traffic to the Service (``gpupoc/workload`` ``load`` mode). Pure: the same
arguments give the same manifests (docs/services.md)."""

from __future__ import annotations

from dataclasses import dataclass

from kubernetes.client import ApiClient

from gpupoc.plan.document import Plan
from gpupoc.plan.model import Tenant, Workload
from gpupoc.plan.service_spec import ServiceSpec
from gpupoc.podspec import labels as L
from gpupoc.podspec.build import BASE_CONTAINER, build_pod

APP_LABEL = "app.kubernetes.io/name"
LOAD_IMAGE = "gpupoc/workload:1.0"


@dataclass(frozen=True)
class ServiceObjects:
    """A service workload's manifests, as JSON-ready dicts."""

    deployment: dict
    service: dict
    load_pod: dict

    @property
    def url(self) -> str:
        return f"http://{self.service['metadata']['name']}"


def _spec_of(workload: Workload) -> ServiceSpec:
    if workload.service is None:
        raise ValueError(f"workload {workload.name} is not kind service: it has no service: section")
    return workload.service


def service_selector(run_id: str, test_class: str) -> str:
    """Label selector of every object a run of a class deployed for its services (replicas and load pods too)."""
    return f"{L.RUN_ID}={L.safe_label_value(run_id)},{L.SERVICE_OF}={L.safe_label_value(test_class)}"


def service_objects(workload: Workload, tenant: Tenant, plan: Plan, *, run_id: str, test_class: str,
                    name: str | None = None, replicas: int | None = None,
                    traffic_seconds: int | None = None) -> ServiceObjects:
    """The Deployment, Service and load pod of ``workload`` run by ``tenant`` (``replicas`` and
    ``traffic_seconds`` override the workload's)."""
    spec = _spec_of(workload)
    name = name or workload.name
    single = workload.model_copy(update={"replicas": 1, "min_available": None})  # replicas of a Deployment
    pod = ApiClient().sanitize_for_serialization(build_pod(single, tenant, plan, run_id=run_id,
                                                           test_class=test_class, wave_gate=False, role="service"))
    template_meta = pod["metadata"]
    template_meta.pop("name", None)
    template_meta.pop("namespace", None)
    own = template_meta["labels"]
    own.pop(L.TEST_CLASS, None)
    own.update({APP_LABEL: name, L.SERVICE_OF: L.safe_label_value(test_class), L.SERVICE: name})
    pod_spec = pod["spec"]
    pod_spec["restartPolicy"] = "Always"
    container = pod_spec["containers"][0]
    container["args"] = list(workload.args) or ["serve", "--port", str(spec.port)]
    container["ports"] = [{"name": "http", "containerPort": spec.port}]
    container.setdefault("env", []).extend([{"name": "WORKLOAD_LATENCY_MS", "value": f"{spec.latency_ms:g}"},
                                            {"name": "WORKLOAD_WARMUP_SECONDS", "value": f"{spec.warmup_seconds:g}"}])
    container["readinessProbe"] = {"httpGet": {"path": spec.readiness_path, "port": "http"}, "periodSeconds": 1,
                                   "failureThreshold": 3}
    labels = {APP_LABEL: name, L.RUN_ID: own[L.RUN_ID], L.TENANT: tenant.name, L.SERVICE_OF: own[L.SERVICE_OF],
              L.SERVICE: name}
    deployment = {"apiVersion": "apps/v1", "kind": "Deployment",
                  "metadata": {"name": name, "namespace": tenant.namespace, "labels": labels},
                  "spec": {"replicas": replicas or workload.replicas, "selector": {"matchLabels": {APP_LABEL: name}},
                           "strategy": {"type": "RollingUpdate",
                                        "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}},
                           "template": {"metadata": template_meta, "spec": pod_spec}}}
    service = {"apiVersion": "v1", "kind": "Service",
               "metadata": {"name": name, "namespace": tenant.namespace, "labels": labels},
               "spec": {"selector": {APP_LABEL: name},
                        "ports": [{"name": "http", "port": spec.port, "targetPort": "http"}]}}
    return ServiceObjects(deployment, service, load_pod(name, spec, tenant, pod_spec, labels, traffic_seconds))


def load_pod(name: str, spec: ServiceSpec, tenant: Tenant, serving_pod_spec: dict, labels: dict,
             seconds: int | None = None) -> dict:
    """The pod that sends the traffic: the ``load`` mode against the Service's ClusterIP and port, from the
    ``{SVC}_SERVICE_HOST``/``_PORT`` the kubelet gives it, on the serving pool without GPUs. Its name label
    differs from the replicas', so that the Service never selects it."""
    prefix = name.upper().replace("-", "_")
    traffic = spec.traffic
    target = f"http://${{{prefix}_SERVICE_HOST}}:${{{prefix}_SERVICE_PORT}}{traffic.path}"
    args = ["load", "--target", target, "--rate", f"{traffic.rate:g}", "--duration",
            str(seconds or traffic.duration_seconds),
            "--timeout", f"{traffic.timeout_seconds:g}", "--lag-bound-ms", f"{traffic.lag_bound_ms:g}"]
    return {"apiVersion": "v1", "kind": "Pod",
            "metadata": {"name": f"{name}-load", "namespace": tenant.namespace,
                         "labels": {**labels, APP_LABEL: f"{name}-load", L.ROLE: "service-load"}},
            "spec": {"restartPolicy": "Never",
                     "nodeSelector": serving_pod_spec.get("nodeSelector") or {},
                     "tolerations": serving_pod_spec.get("tolerations") or [],
                     "containers": [{"name": BASE_CONTAINER, "image": LOAD_IMAGE, "args": args,
                                     "resources": {"requests": {"cpu": "100m", "memory": "64Mi"},
                                                   "limits": {"memory": "256Mi"}}}]}}
