"""
# Tenant isolation

For each pair of tenants, every cross-tenant attempt is made with the tenant's own token (list and get pods,
read logs, secrets and the config maps holding artifacts, create a pod, patch the quota), each beside the
matching access review. One submission goes beyond a tenant's quota (blocked, queued or sent for approval:
recorded with the message the user sees). Usage against quota is sampled through the run while two tenants
compete for the same pool, with each one's share.

**Passes when** there is no cross-tenant access, no quota failure and no tenant harms another. Evidence:
`access_probes`, `quota_samples`, `workload_runs`, `platform_info`.
The Airflow DAG comes from `gpupoc.dags.factory.build_dag`, shared by the five test classes.
"""

from gpupoc.dags.factory import build_dag

dag = build_dag("tenant_isolation", __doc__)
