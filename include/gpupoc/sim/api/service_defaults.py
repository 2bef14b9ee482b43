"""What the API server defaults and validates on the serving objects: Deployments, ReplicaSets, Services and
PodDisruptionBudgets, and ``metadata.generation`` on a change of their spec.

- Deployment (kubernetes ``pkg/apis/apps/v1/defaults.go`` ``SetDefaults_Deployment``): ``replicas`` 1,
  ``strategy`` RollingUpdate with ``maxSurge``/``maxUnavailable`` 25%, ``revisionHistoryLimit`` 10,
  ``progressDeadlineSeconds`` 600; the pod template's ``restartPolicy`` Always. ReplicaSet: ``replicas`` 1.
  Both require ``spec.selector`` matching the template's labels (``pkg/apis/apps/validation/validation.go``:
  "`selector` does not match template `labels`").
- Service (``pkg/apis/core/v1/defaults.go`` ``SetDefaults_Service`` and the ClusterIP allocator of
  ``pkg/registry/core/service/ipallocator``): ``type`` ClusterIP, ``sessionAffinity`` None, each port's
  ``protocol`` TCP and ``targetPort`` its ``port``, ``internalTrafficPolicy`` Cluster, ``ipFamilies`` IPv4,
  ``ipFamilyPolicy`` SingleStack, and a ClusterIP from ``SERVICE_CIDR``: the simulated cluster's service range
  is inside the loopback range, so a ClusterIP is an address of this host (``clusterIP: None`` stays headless).
- ``metadata.generation`` is 1 on create and grows with each change of ``spec``
  (``pkg/registry/apps/deployment/strategy.go`` ``PrepareForUpdate``), as ``kubectl rollout status`` compares it
  with ``status.observedGeneration``.
"""

from __future__ import annotations

import ipaddress

from gpupoc.sim.api.status import invalid
from gpupoc.sim.cluster import ClusterState
from gpupoc.sim.selectors import labels_match, parse_label_selector

SERVICE_CIDR = ipaddress.ip_network("127.96.0.0/16")
FIRST_SERVICE_HOST = 10  # the first addresses stay free, as the API server keeps .1 for "kubernetes"
GENERATED = ("deployments", "replicasets", "poddisruptionbudgets")


def match_labels_selector(selector: dict | None) -> str:
    """A ``metav1.LabelSelector`` (``matchLabels``, ``matchExpressions``) as label-selector text."""
    selector = selector or {}
    parts = [f"{k}={v}" for k, v in sorted((selector.get("matchLabels") or {}).items())]
    for expr in selector.get("matchExpressions") or []:
        key, op, values = expr.get("key", ""), expr.get("operator", ""), expr.get("values") or []
        if op in ("In", "NotIn"):
            parts.append(f"{key} {op.lower()} ({','.join(values)})")
        elif op == "Exists":
            parts.append(key)
        elif op == "DoesNotExist":
            parts.append(f"!{key}")
    return ",".join(parts)


def selector_matches(selector: dict | None, labels: dict | None) -> bool:
    """Whether ``labels`` match a ``metav1.LabelSelector``; an empty selector matches nothing here (as the
    controllers treat it: a Deployment's must not be empty)."""
    text = match_labels_selector(selector)
    if not text:
        return False
    return labels_match(parse_label_selector(text), {"metadata": {"labels": labels or {}}})


def _check_selector(kind: str, group: str, obj: dict) -> None:
    spec = obj.get("spec") or {}
    name = (obj.get("metadata") or {}).get("name", "")
    labels = ((spec.get("template") or {}).get("metadata") or {}).get("labels") or {}
    if not (spec.get("selector") or {}).get("matchLabels") and not (spec.get("selector") or {}).get("matchExpressions"):
        raise invalid(kind, name, [("spec.selector", "Required value")], group)
    if not selector_matches(spec["selector"], labels):
        raise invalid(kind, name, [("spec.template.metadata.labels", f"Invalid value: {labels}: `selector` does not "
                                    "match template `labels`")], group)
    policy = ((spec.get("template") or {}).get("spec") or {}).get("restartPolicy")
    if policy not in (None, "Always"):  # a controller's pods always restart (ValidatePodTemplateSpecForReplicaSet)
        raise invalid(kind, name, [("spec.template.spec.restartPolicy",
                                    f'Unsupported value: "{policy}": supported values: "Always"')], group)


def _template_defaults(spec: dict) -> None:
    pod_spec = spec.setdefault("template", {}).setdefault("spec", {})
    pod_spec.setdefault("restartPolicy", "Always")
    pod_spec.setdefault("terminationGracePeriodSeconds", 30)
    pod_spec.setdefault("dnsPolicy", "ClusterFirst")
    pod_spec.setdefault("schedulerName", "default-scheduler")


def deployment(state: ClusterState, obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    _check_selector("Deployment", "apps", obj)
    spec.setdefault("replicas", 1)
    strategy = spec.setdefault("strategy", {})
    strategy.setdefault("type", "RollingUpdate")
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.setdefault("rollingUpdate", {})
        rolling.setdefault("maxSurge", "25%")
        rolling.setdefault("maxUnavailable", "25%")
    spec.setdefault("revisionHistoryLimit", 10)
    spec.setdefault("progressDeadlineSeconds", 600)
    _template_defaults(spec)
    obj["metadata"]["generation"] = 1
    obj["status"] = {}


def replicaset(state: ClusterState, obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    _check_selector("ReplicaSet", "apps", obj)
    spec.setdefault("replicas", 1)
    _template_defaults(spec)
    obj["metadata"]["generation"] = 1
    obj["status"] = {"replicas": 0}


def allocate_cluster_ip(state: ClusterState) -> str:
    """The first free address of the cluster's service range (``state.network``; ``SERVICE_CIDR`` unless it
    claimed a network of its own)."""
    used = {(s.get("spec") or {}).get("clusterIP") for s in state.store.list("services")}
    cidr = state.network.service_cidr
    for offset in range(FIRST_SERVICE_HOST, cidr.num_addresses - 1):
        ip = str(cidr[offset])
        if ip not in used:
            return ip
    raise invalid("Service", "", [("spec.clusterIPs", "Internal error: failed to allocate a serviceIP: range is "
                                   "full")])


def service(state: ClusterState, obj: dict) -> None:
    spec = obj.setdefault("spec", {})
    name = obj["metadata"].get("name", "")
    spec.setdefault("type", "ClusterIP")
    spec.setdefault("sessionAffinity", "None")
    ports = spec.get("ports") or []
    if not ports and spec.get("clusterIP") != "None":
        raise invalid("Service", name, [("spec.ports", "Required value")])
    for port in ports:
        port.setdefault("protocol", "TCP")
        port.setdefault("targetPort", port.get("port"))
    if spec.get("clusterIP") != "None":
        ip = spec.get("clusterIP") or allocate_cluster_ip(state)
        spec["clusterIP"] = ip
        spec["clusterIPs"] = [ip]
    spec.setdefault("internalTrafficPolicy", "Cluster")
    spec.setdefault("ipFamilies", ["IPv4"])
    spec.setdefault("ipFamilyPolicy", "SingleStack")
    obj["status"] = {"loadBalancer": {}}


def disruption_budget(state: ClusterState, obj: dict) -> None:
    obj["metadata"]["generation"] = 1
    obj["status"] = {"disruptionsAllowed": 0, "currentHealthy": 0, "desiredHealthy": 0, "expectedPods": 0}


ON_CREATE = {"deployments": deployment, "replicasets": replicaset, "services": service,
             "poddisruptionbudgets": disruption_budget}


def on_update(resource: str, old: dict, new: dict) -> None:
    """Bump ``metadata.generation`` when the spec of a generated resource changed; keep a Service's ClusterIP."""
    if resource == "services":
        keep = (old.get("spec") or {})
        spec = new.setdefault("spec", {})
        for key in ("clusterIP", "clusterIPs"):
            if key in keep:
                spec[key] = keep[key]
        for port in spec.get("ports") or []:
            port.setdefault("protocol", "TCP")
            port.setdefault("targetPort", port.get("port"))
        return
    if resource not in GENERATED:
        return
    generation = int((old.get("metadata") or {}).get("generation") or 1)
    if (old.get("spec") or {}) != (new.get("spec") or {}):
        generation += 1
    new.setdefault("metadata", {})["generation"] = generation
