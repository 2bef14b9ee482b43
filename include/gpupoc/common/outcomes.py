"""The POC's outcome vocabulary, shared by the plan, validation and the report."""

from __future__ import annotations

from enum import Enum


class Tier(str, Enum):
    """How much an item weighs in the decision."""

    MUST = "must"
    KEY = "key"
    EXPERIENCE = "experience"


class Verdict(str, Enum):
    """A check's or item's outcome. A missing measurement is NOT_VERIFIED, never PASS."""

    PASS = "pass"
    FAIL = "fail"
    NOT_VERIFIED = "not_verified"


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
