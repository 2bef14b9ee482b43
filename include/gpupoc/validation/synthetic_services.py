"""Synthetic evidence of a class's online service (docs/services.md), for tests and demos: the tables
``steps/service_collect.py`` writes, of a platform that serves well and, on request, of one that does not.

A good service answers every request within its SLO through the congestion wave; in the fault-recovery class a
node failure under one of its replicas costs a few seconds of traffic, the dead endpoint leaves at once and a
replacement is ready well within the bounds. The faults each break what one check judges: ``breach`` (traffic
misses the SLO), ``unready`` (requests answered by a replica still loading), ``preempted_low`` (a serving
replica preempted for a lower priority), ``stale`` (the dead endpoint stays ready), ``slow_replacement``.
"""

from __future__ import annotations

from datetime import timedelta

import pandas as pd

from gpupoc.validation.synthetic import T0, utilization

SERVICE, WORKLOAD, TENANT = "svc-infer-b7b888", "svc-infer", "team-serving"
SLO = {"slo_availability_pct": 99.0, "slo_p95_ms": 500.0, "slo_p99_ms": 1000.0}
TRAFFIC_START = T0 + timedelta(seconds=20)
NODE_FAILURE_SECOND = 15  # the fault-recovery class fails the node under a replica this far into the traffic
SERVING_PRIORITY, LOW_PRIORITY = 100000, 10
# What ``validate_run`` is told of a plan whose classes deploy the service, send it traffic and fail a node.
SERVICE_PARAMETERS = {"services_defined": True, "service_traffic_defined": True, "service_failures_defined": True}


def _t(seconds: float) -> pd.Timestamp:
    return pd.Timestamp(TRAFFIC_START + timedelta(seconds=float(seconds)))


def service_probes(seconds: int = 40, down: tuple[int, ...] = (), slow: tuple[int, ...] = (),
                   unready: tuple[int, ...] = ()) -> pd.DataFrame:
    """One row per second of traffic, 5 requests a second: ``down`` seconds unanswered, ``slow`` ones above
    the p95 bound, ``unready`` ones answered 503 by a replica still loading."""
    rows = []
    for s in range(seconds):
        ok = 0 if s in down or s in unready else 5
        p95 = None if not ok else (800.0 if s in slow else 24.0 + s % 5)
        rows.append(dict(service=SERVICE, workload=WORKLOAD, tenant=TENANT, second=s, ts=_t(s), sent=5, ok=ok,
                         unready=5 if s in unready else 0, unanswered=5 if s in down else 0,
                         availability_pct=100.0 * ok / 5, p50_ms=None if p95 is None else p95 - 2, p95_ms=p95,
                         p99_ms=None if p95 is None else p95 + 1,
                         breach=ok < 5 or (p95 is not None and p95 > SLO["slo_p95_ms"])))
    return pd.DataFrame(rows)


def service_slo(probes: pd.DataFrame) -> pd.DataFrame:
    """The probes judged against the SLO, as ``pipeline/service_slo.py`` ``judge`` does."""
    sent = int(probes["sent"].sum())
    availability = round(100.0 * int(probes["ok"].sum()) / sent, 2)
    p95, p99 = float(probes["p95_ms"].max()), float(probes["p99_ms"].max())
    misses = ([f"availability {availability:g}% < {SLO['slo_availability_pct']:g}%"]
              if availability < SLO["slo_availability_pct"] else [])
    misses += [f"p95 {p95:g} ms > {SLO['slo_p95_ms']:g} ms"] if p95 > SLO["slo_p95_ms"] else []
    reason = "; ".join(misses) or f"availability {availability:g}%, worst p95 {p95} ms, worst p99 {p99} ms"
    return pd.DataFrame([dict(service=SERVICE, workload=WORKLOAD, tenant=TENANT,
                              traffic_started_at=probes["ts"].min(), traffic_ended_at=probes["ts"].max(),
                              seconds=len(probes), sent=sent, availability_pct=availability, worst_p95_ms=p95,
                              worst_p99_ms=p99, breach_seconds=int(probes["breach"].sum()),
                              unready_answers=int(probes["unready"].sum()), **SLO, held=not misses, reason=reason)])


def service_replicas(preempted_by: tuple[str, int] | None = None, node_failure: bool = False) -> pd.DataFrame:
    """The serving replicas: two running; ``preempted_by`` (preemptor, its priority) preempts a third;
    ``node_failure``: the first was evicted with its node and a replacement took its place."""
    def replica(k: int, node: str, **end) -> dict:
        return dict(service=SERVICE, tenant=TENANT, pod=f"{SERVICE}-7d6d9dc654-r{k}", node=node, gpus=1,
                    priority=SERVING_PRIORITY, created_at=_t(-10), ready_at=_t(-6), ended_at=None, end="running",
                    end_reason=None, end_message=None, preemptor=None, preemptor_priority=None,
                    preempted_by_higher=None) | end
    rows = [replica(0, "inference-node-0"), replica(1, "inference-node-1")]
    if preempted_by is not None:
        who, prio = preempted_by
        rows.append(replica(2, "inference-node-1", ended_at=_t(8), end="preempted", end_reason="Preempted",
                            end_message="Preempted by pod " + who.split("/")[-1], preemptor=who,
                            preemptor_priority=prio, preempted_by_higher=prio > SERVING_PRIORITY))
    if node_failure:
        rows[0] |= dict(ended_at=_t(NODE_FAILURE_SECOND + 8), end="evicted", end_reason="DeletionByTaintManager",
                        end_message="Taint manager: deleting due to NoExecute taint")
        rows.append(replica(3, "inference-node-2", created_at=_t(NODE_FAILURE_SECOND + 8),
                            ready_at=_t(NODE_FAILURE_SECOND + 12)))
    return pd.DataFrame(rows)


def service_history(seconds: int = 40) -> pd.DataFrame:
    """The observer's snapshots every 5 seconds: two ready replicas behind two ready endpoints."""
    pods = f"{SERVICE}-7d6d9dc654-r0,{SERVICE}-7d6d9dc654-r1"
    return pd.DataFrame([dict(at=_t(s), service=SERVICE, desired_replicas=2, ready_replicas=2, available_replicas=2,
                              ready_endpoints=2, not_ready_endpoints=0, ready_endpoint_pods=pods)
                         for s in range(0, seconds, 5)])


def service_recovery(stale: bool = False, slow_replacement: bool = False, breach_seconds: int = 3) -> pd.DataFrame:
    """The node failure under a replica: the dead endpoint removed (``stale``: it stayed ready), the
    replacement ready (``slow_replacement``: after 120 s, beyond the 90 s bound)."""
    replaced = 120.0 if slow_replacement else 12.0
    return pd.DataFrame([dict(
        service=SERVICE, node="inference-node-0", failed_at=_t(NODE_FAILURE_SECOND),
        recovered_at=_t(NODE_FAILURE_SECOND + 30), victim_pods=f"{SERVICE}-7d6d9dc654-r0",
        endpoint_removed=not stale, endpoint_removal_seconds=None if stale else 0.4,
        replacement_pod=f"{SERVICE}-7d6d9dc654-r3", replacement_ready=True, replacement_seconds=replaced,
        breach_seconds=breach_seconds, unready_answers=0, injection="sim-endpoint",
        reason="the failed node's replica stayed a ready endpoint while the observer looked" if stale else None)])


def service_tables(test_class: str, faults: frozenset[str] | set[str] = frozenset()) -> dict[str, pd.DataFrame]:
    """The service tables one class writes, with ``faults`` (see the module's docstring)."""
    failing = test_class == "fault_recovery"
    down = tuple(range(NODE_FAILURE_SECOND, NODE_FAILURE_SECOND + (30 if "breach" in faults and failing else 3))) \
        if failing else (tuple(range(10, 16)) if "breach" in faults else ())
    probes = service_probes(down=down, slow=(20, 21) if "breach" in faults and not failing else (),
                            unready=(30,) if "unready" in faults else ())
    preemptor = (f"team-vision/qc-low-{LOW_PRIORITY}", LOW_PRIORITY) if "preempted_low" in faults else None
    tables = {"service_probes": probes, "service_slo": service_slo(probes), "service_history": service_history(),
              "service_replicas": service_replicas(preemptor, node_failure=failing)}
    if failing:
        tables["service_recovery"] = service_recovery("stale" in faults, "slow_replacement" in faults, len(down))
    return tables


def serving_utilization(hours: int = 4) -> pd.DataFrame:
    """The utilization rows with the ``serving`` column: the inference tenant's GPU serves, the others do not."""
    ut = utilization(hours)
    return ut.assign(serving=(ut["namespace"] == TENANT) & (ut["task_type"] == "inference"))
