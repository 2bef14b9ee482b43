"""How a class's wave is submitted: one ``KubernetesPodOperator`` task per pod, or in bulk shards.

``operator`` (one task per pod) shows each pod as an Airflow task; Airflow starts about 4 tasks a second on 2
cores, so above a few hundred pods the pipeline, not the platform, sets the pace. ``bulk`` submits the wave
from one task per shard of ``shard_size`` pods of one tenant, through the async Kubernetes client at ``qps``
and ``burst`` (kube-burner's client settings). ``auto`` (the default) is ``operator`` up to ``bulk_above``
pods and ``bulk`` above. A bulk wave's gates are lifted by one client at ``release_qps`` after
``release_burst``: by default the shards' rates together, so the release goes as fast as the creations went.
"""

from __future__ import annotations

from enum import Enum

from pydantic import Field

from gpupoc.common.fields import PositiveInt, PositiveNumber, StrictModel


class SubmissionMode(str, Enum):
    AUTO = "auto"
    OPERATOR = "operator"
    BULK = "bulk"


class SubmissionSpec(StrictModel):
    """``submission:`` of a test class."""

    mode: SubmissionMode = Field(default=SubmissionMode.AUTO,
                                 description="operator (one task per pod), bulk (one task per shard), or auto")
    bulk_above: PositiveInt = Field(default=500, description="auto: waves of more pods than this go in bulk")
    shard_size: PositiveInt = Field(default=500, le=5000, description="pods per bulk task (one tenant each)")
    qps: PositiveNumber = Field(default=50, description="bulk: requests per second per shard, after the burst")
    burst: PositiveInt = Field(default=100, description="bulk: requests a shard may send at once")
    release_qps: PositiveNumber | None = Field(
        default=None, description="bulk: gate removals per second after the burst (default: the shards' qps together)")
    release_burst: PositiveInt | None = Field(
        default=None, description="bulk: gate removals sent at once (default: the shards' bursts together)")

    def bulk(self, wave_size: int) -> bool:
        """Whether a wave of ``wave_size`` pods goes in bulk."""
        if self.mode is SubmissionMode.AUTO:
            return wave_size > self.bulk_above
        return self.mode is SubmissionMode.BULK

    def release_rate(self, shard_count: int) -> tuple[float, int]:
        """The bulk release's ``(qps, burst)``: as stated, or the ``shard_count`` shards' rates together (the
        release may go as fast as the shards created)."""
        n = max(1, shard_count)
        return (self.release_qps or self.qps * n, self.release_burst or self.burst * n)
