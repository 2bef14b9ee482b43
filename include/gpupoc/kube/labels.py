"""The label, annotation and RBAC names the project's cluster objects carry, on a simulated or a real cluster."""

PART_OF = {"app.kubernetes.io/part-of": "gpupoc"}  # every object ``gpupoc cluster manifests`` renders
TENANT_LABEL = "gpupoc.io/tenant"  # a tenant's namespace, ServiceAccount, quota and pods
TENANT_ROLE = "gpupoc-tenant"  # the Role bound to each tenant's ServiceAccount in its namespace
QUEUE_READER = "gpupoc-tenant-queues"  # the ClusterRole letting tenants read Volcano's or KAI's queues
# Annotation the simulated cluster puts on each of its nodes; a real node never carries it.
SIMULATED_ANNOTATION = "gpupoc.io/simulated"
# Annotation on a KWOK node (a real control plane's fake node: no kubelet, no GPU; KWOK writes its status).
KWOK_ANNOTATION = "kwok.x-k8s.io/node"
