"""The default plan with one ``kind: service`` workload added (the default plan has none yet)."""

from __future__ import annotations

import copy
from pathlib import Path

import yaml

from gpupoc.plan import DEFAULT_PLAN, parse_plan

SERVICE_WORKLOAD = {
    "name": "svc-echo", "kind": "service", "image": "gpupoc/virtual:1.0", "gpus": 1, "cpu": "100m",
    "memory_request": "64Mi", "memory_limit": "128Mi", "duration_seconds": 20, "task_type": "inference",
    "pool": "inference", "priority_class": "gpupoc-critical", "replicas": 2,
    "service": {"port": 8080, "latency_ms": 20, "traffic": {"rate": 4, "duration_seconds": 3},
                "slo": {"availability_pct": 99, "p95_ms": 400, "p99_ms": 800}},
}


def plan_with_service(**service_overrides):
    raw = yaml.safe_load(Path(DEFAULT_PLAN).read_text())
    workload = copy.deepcopy(SERVICE_WORKLOAD)
    workload["service"].update(service_overrides)
    raw["workloads"].append(workload)
    return parse_plan(raw)
