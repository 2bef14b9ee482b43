"""The Airflow connections the plan names exist (the cluster's, Prometheus's, Alertmanager's)."""

from __future__ import annotations

from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.model import CheckResult, failed, not_applicable, ok
from gpupoc.preflight.registry import check


def named_connections(plan) -> list[tuple[str, str]]:
    """(plan field, connection id) of every connection the plan names."""
    fields = (("platform.kubernetes_conn_id", plan.platform.kubernetes_conn_id),
              ("evidence_sources.prometheus_conn_id", plan.evidence_sources.prometheus_conn_id),
              ("evidence_sources.alertmanager_conn_id", plan.evidence_sources.alertmanager_conn_id))
    return [(f, v) for f, v in fields if v]


@check("airflow.connections", "the Airflow connections the plan names exist")
def connections(ctx: PreflightContext) -> list[CheckResult]:
    named = named_connections(ctx.plan)
    if not named:
        return [not_applicable("airflow.connections", "", "the plan names no Airflow connection")]
    out = []
    for field, conn_id in named:
        exists = ctx.connection_exists(conn_id)
        if exists is None:
            out.append(failed("airflow.connections", conn_id, f"{field}: no Airflow to ask here",
                              "run the preflight where Airflow runs (--airflow-home) or in the class DAG"))
        elif exists:
            out.append(ok("airflow.connections", conn_id, f"exists ({field})"))
        else:
            out.append(failed("airflow.connections", conn_id, f"does not exist ({field})",
                              f"create it: airflow connections add {conn_id} --conn-type ... (docs/real-cluster.md)"))
    return out
