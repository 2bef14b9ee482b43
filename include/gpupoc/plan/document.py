"""The root of the POC plan and the look-ups the DAGs use."""

from __future__ import annotations

import os
from pathlib import Path

from pydantic import Field, PrivateAttr

from gpupoc.common.fields import StrictModel
from gpupoc.costing.prices import Prices
from gpupoc.plan.classes import ClassSpec, TestClass, TestClasses
from gpupoc.plan.cluster_setup import ClusterSetup
from gpupoc.plan.model import Platform, Pool, PriorityClassRef, Tenant, Workload
from gpupoc.plan.platforms import PlatformEntry
from gpupoc.plan.settings import EvidenceSources, ReportSettings, Window


class Plan(StrictModel):
    """A complete POC plan. Build it with ``gpupoc.plan.load_plan`` so references are checked too."""

    version: int = Field(default=1, ge=1, le=1)
    name: str = Field(min_length=1)
    description: str = ""
    platform: Platform
    priority_classes: list[PriorityClassRef] = Field(min_length=1)
    tenants: list[Tenant] = Field(min_length=1)
    pools: list[Pool] = Field(min_length=1)
    workloads: list[Workload] = Field(min_length=1)
    test_classes: TestClasses
    window: Window
    evidence_sources: EvidenceSources = Field(default_factory=EvidenceSources)
    report: ReportSettings = Field(default_factory=ReportSettings)
    cluster: ClusterSetup = Field(default_factory=ClusterSetup, description="what the cluster must hold: "
                                  "identities, queues, preflight settings (gpupoc cluster / preflight)")
    evidence_root: str = Field(min_length=1, description="relative paths resolve against the plan file")
    platforms: list[PlatformEntry] = Field(default_factory=list, description="candidate platforms; one is "
                                           "chosen at run time with --platform (gpupoc.plan.platforms)")
    prices: Prices | None = Field(default=None, description="what a GPU-hour costs, per GPU model, in one "
                                  "currency (gpupoc.costing; the report's cost attribution)")
    platform_choice: str | None = Field(default=None, description="the entry of platforms this plan runs as "
                                        "(set by --platform, not by hand)")

    _base_dir: Path = PrivateAttr(default_factory=Path.cwd)
    _warnings: tuple[str, ...] = PrivateAttr(default=())

    # ---- look-ups (names are checked at load time, so a miss here is a programming error) ----
    def tenant(self, name: str) -> Tenant:
        return _find(self.tenants, name, "tenant")

    def pool(self, name: str) -> Pool:
        return _find(self.pools, name, "pool")

    def workload(self, name: str) -> Workload:
        return _find(self.workloads, name, "workload")

    def priority_value(self, name: str) -> int:
        return _find(self.priority_classes, name, "priority class").value

    def test_class(self, tc: TestClass | str) -> ClassSpec:
        return getattr(self.test_classes, TestClass(tc).value)

    def longest_acceptable_wait_seconds(self) -> int:
        """The wait no workload should exceed: the congestion threshold (other classes are smaller waves)."""
        return int(round(self.test_classes.queue_congestion.thresholds.max_wait_seconds))

    @property
    def warnings(self) -> tuple[str, ...]:
        """``path: message`` lines about what the plan names but is not there yet (set by ``load_plan``)."""
        return self._warnings

    # ---- paths ----
    @property
    def base_dir(self) -> Path:
        return self._base_dir

    def resolve_path(self, value: str | os.PathLike) -> Path:
        """Expand ``~`` and ``$VARS``; a relative path resolves against the plan file's directory."""
        p = Path(os.path.expandvars(os.path.expanduser(str(value))))
        return p if p.is_absolute() else (self._base_dir / p).resolve()

    @property
    def kubeconfig_path(self) -> Path | None:
        return self.resolve_path(self.platform.kubeconfig) if self.platform.kubeconfig else None

    @property
    def evidence_root_path(self) -> Path:
        return self.resolve_path(self.evidence_root)

    def resolved_sources(self) -> dict[str, str]:
        """The evidence sources that are set, file paths made absolute (for monitoring.resolve_sources)."""
        out = {}
        for key, value in self.evidence_sources.model_dump().items():
            if value and not isinstance(value, dict):  # ``audit`` is a source of its own (monitoring.audit_source)
                out[key] = str(self.resolve_path(value)) if key.endswith(("_path", "_record")) else value
        return out


def _find(items: list, name: str, what: str):
    for item in items:
        if item.name == name:
            return item
    raise KeyError(f"unknown {what} {name!r}; known: {sorted(i.name for i in items)}")
