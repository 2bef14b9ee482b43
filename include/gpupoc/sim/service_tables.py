"""Server-side printing of the serving objects, with kubectl's columns (kubernetes
``pkg/printers/internalversion/printers.go``: ``deploymentColumnDefinitions``, ``replicaSetColumnDefinitions``,
``serviceColumnDefinitions``, ``endpointSliceColumnDefinitions``, ``podDisruptionBudgetColumnDefinitions``)."""

from __future__ import annotations

from typing import Callable

Row = list
Columns = list[tuple[str, str, int, str]]


def _c(name: str, type_: str = "string", priority: int = 0) -> tuple[str, str, int, str]:
    return (name, type_, priority, "")


def _n(o: dict, *path: str) -> int:
    cur: object = o
    for key in path:
        cur = (cur or {}).get(key) if isinstance(cur, dict) else None
    return int(cur or 0)


_AGE: list[Callable[[str | None], str]] = []  # tables.age, given by ``service_printers``


def _age(o: dict) -> str:
    return _AGE[0](o["metadata"].get("creationTimestamp"))


def _deployment(o: dict) -> Row:
    want = _n(o, "spec", "replicas")
    return [o["metadata"]["name"], f"{_n(o, 'status', 'readyReplicas')}/{want}", _n(o, "status", "updatedReplicas"),
            _n(o, "status", "availableReplicas"), _age(o)]


def _replicaset(o: dict) -> Row:
    return [o["metadata"]["name"], _n(o, "spec", "replicas"), _n(o, "status", "replicas"),
            _n(o, "status", "readyReplicas"), _age(o)]


def _ports(ports: list[dict]) -> str:
    return ",".join(f"{p.get('port')}/{p.get('protocol', 'TCP')}" for p in ports) or "<none>"


def _service(o: dict) -> Row:
    spec = o.get("spec") or {}
    return [o["metadata"]["name"], spec.get("type", "ClusterIP"), spec.get("clusterIP", "<none>"), "<none>",
            _ports(spec.get("ports") or []), _age(o)]


def _endpointslice(o: dict) -> Row:
    ports = ",".join(str(p.get("port")) for p in o.get("ports") or []) or "<unset>"
    addresses = [a for e in o.get("endpoints") or [] for a in e.get("addresses") or []]
    shown = ",".join(addresses[:3]) + (f" + {len(addresses) - 3} more..." if len(addresses) > 3 else "")
    return [o["metadata"]["name"], o.get("addressType", "IPv4"), ports, shown or "<unset>", _age(o)]


def _pdb(o: dict) -> Row:
    spec = o.get("spec") or {}
    return [o["metadata"]["name"], str(spec.get("minAvailable", "N/A")), str(spec.get("maxUnavailable", "N/A")),
            _n(o, "status", "disruptionsAllowed"), _age(o)]


def service_printers(age: Callable[[str | None], str]) -> dict[str, tuple[Columns, Callable[[dict], Row]]]:
    """The printers by resource; ``age`` formats a creationTimestamp as kubectl's AGE column does."""
    _AGE[:] = [age]
    return dict(SERVICE_PRINTERS)


SERVICE_PRINTERS: dict[str, tuple[Columns, Callable[[dict], Row]]] = {
    "deployments": ([_c("Name"), _c("Ready"), _c("Up-to-date", "integer"), _c("Available", "integer"), _c("Age")],
                    _deployment),
    "replicasets": ([_c("Name"), _c("Desired", "integer"), _c("Current", "integer"), _c("Ready", "integer"),
                     _c("Age")], _replicaset),
    "services": ([_c("Name"), _c("Type"), _c("Cluster-IP"), _c("External-IP"), _c("Port(s)"), _c("Age")], _service),
    "endpointslices": ([_c("Name"), _c("AddressType"), _c("Ports"), _c("Endpoints"), _c("Age")], _endpointslice),
    "poddisruptionbudgets": ([_c("Name"), _c("Min Available"), _c("Max Unavailable"),
                              _c("Allowed Disruptions", "integer"), _c("Age")], _pdb),
}
