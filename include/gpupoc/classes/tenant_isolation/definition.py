"""The tenant-isolation class: cross-tenant attempts and quota samples beside the wave; the reclaim probe after
the wave (a no-op without ``test_classes.tenant_isolation.reclaim``); the memory-isolation probe after both, on
a shared card (nothing to provoke where no node shares its GPUs); the vGPU slices probe beside it, on another
node's card (nothing to provoke where no node slices GPU memory)."""

from __future__ import annotations

from gpupoc.classes.definition import COMMON_TABLES, ClassDefinition
from gpupoc.classes.tenant_isolation.memory_isolation import memory_isolation_probe
from gpupoc.classes.tenant_isolation.parameters import suite_parameters
from gpupoc.classes.tenant_isolation.probes import collect_isolation, isolation_probes, sample_quotas
from gpupoc.classes.tenant_isolation.reclaim import reclaim_probe
from gpupoc.classes.tenant_isolation.vgpu_slices import vgpu_slices_probe
from gpupoc.common.test_classes import TestClass

DEFINITION = ClassDefinition(
    TestClass.TENANT_ISOLATION, ("isolation", "quota", "rbac", "fair-share"),
    (("isolation_probes", isolation_probes), ("sample_quotas", sample_quotas), ("reclaim_probe", reclaim_probe),
     ("memory_isolation_probe", memory_isolation_probe), ("vgpu_slices_probe", vgpu_slices_probe)),
    collect_isolation,
    (*COMMON_TABLES, "access_probes", "quota_samples", "memory_isolation", "vgpu_slices"),
    "cross-tenant attempts denied", suite_parameters)
