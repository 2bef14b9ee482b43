"""The POC's outcome vocabulary, shared by the plan, validation and the report."""

from __future__ import annotations

from enum import Enum


class Tier(str, Enum):
    """How much an item weighs in the decision."""

    MUST = "must"
    KEY = "key"
    EXPERIENCE = "experience"


class Verdict(str, Enum):
    """A check's or item's outcome. A missing measurement is NOT_VERIFIED, never PASS. NOT_APPLICABLE: a
    conditional check whose case never arose in evidence that was collected (nothing was deleted, the platform
    offers no expected wait); it is never a pass, and never stands for missing evidence."""

    PASS = "pass"
    FAIL = "fail"
    NOT_VERIFIED = "not_verified"
    NOT_APPLICABLE = "not_applicable"


class FailureClass(str, Enum):
    """Why an item failed, as the method classifies failures."""

    PRODUCT_GAP = "product_gap"
    CONFIGURATION = "configuration"
    DATA_PREPARATION = "data_preparation"
    SCENARIO_MISMATCH = "scenario_mismatch"


class Decision(str, Enum):
    """The go-live decision."""

    GO_LIVE = "go-live"
    LIMITED_GO_LIVE = "limited-go-live"
    POSTPONE = "postpone"
    LATER_OPTIMIZATION = "later-optimization"


class WorkloadOutcome(str, Enum):
    """How one attempt of a wave item ended. Only LOST fails "no task lost": preemption and eviction are
    platform behaviour, judged under scheduling policy and queue explainability."""

    SUCCEEDED = "succeeded"
    FAILED = "failed"          # the container ended non-zero (exit code and reason kept)
    PREEMPTED = "preempted"    # the platform took its GPUs for another workload (who, when)
    EVICTED = "evicted"        # node failure, taint manager, pressure, drain
    REJECTED = "rejected"      # refused at admission (quota or webhook message)
    DELETED = "deleted"        # deleted by an identity the audit log names
    PENDING = "pending"        # not finished at its deadline
    LOST = "lost"              # vanished and neither objects, events nor the audit log say why

    @property
    def resubmittable(self) -> bool:
        """Users (a Job controller, an Airflow retry) submit such a workload again."""
        return self in (WorkloadOutcome.PREEMPTED, WorkloadOutcome.EVICTED)

    @property
    def final(self) -> bool:
        """The attempt is over (PENDING is only final at the deadline)."""
        return self is not WorkloadOutcome.PENDING
