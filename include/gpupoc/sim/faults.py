"""Planted defects (fault profiles) so a POC can prove it catches a bad platform."""

from __future__ import annotations

from enum import Enum

from gpupoc.exceptions import ConfigError


class Fault(str, Enum):
    CROSS_TENANT_LOGS = "cross-tenant-logs"  # tenant tokens may read other namespaces' pod logs
    QUOTA_NOT_ENFORCED = "quota-not-enforced"  # ResourceQuota admission lets every pod through
    EVENTS_DROPPED = "events-dropped"  # no Warning events are recorded for failures
    LOGS_LOST_ON_FAILURE = "logs-lost-on-failure"  # a failed container's log is gone
    PRIORITY_IGNORED = "priority-ignored"  # plain FIFO by creation time, no preemption
    GPUS_LEAK = "gpus-leak"  # GPUs of failed pods are never released
    AUDIT_GAPS = "audit-gaps"  # quota changes leave no audit record


def parse_faults(value: str | None) -> frozenset[Fault]:
    """Parse ``--faults a,b``; an unknown name is refused with the list of known ones."""
    if not value:
        return frozenset()
    out = set()
    for name in (v.strip() for v in value.split(",")):
        if not name:
            continue
        try:
            out.add(Fault(name))
        except ValueError:
            known = ", ".join(f.value for f in Fault)
            raise ConfigError("--faults", [f"faults: unknown fault profile {name!r}; known: {known}"]) from None
    return frozenset(out)
