"""Behaviour profiles: variations of a correct platform (timing, wording, API manners), not defects.

A POC's verdict must not depend on them: each is how some real platform behaves. The defects a POC must
catch are the fault profiles (``faults.py``). No profile chosen is the simulated cluster's plain behaviour.
"""

from __future__ import annotations

import random
from enum import Enum

from gpupoc.exceptions import ConfigError
from gpupoc.sim.profiles import parse_profiles


class Behaviour(str, Enum):
    RELEASE_STAGGERED = "release-staggered"  # lifted gates take effect one by one after a seeded 0-2 s delay
    KUEUE_REQUEUE = "kueue-requeue"  # Kueue stops preempted pods, a controller requeues them under new names
    VOLCANO_WORDING = "volcano-wording"  # the scheduler speaks Volcano's events and conditions
    KAI_WORDING = "kai-wording"  # the scheduler speaks KAI's events and conditions
    ZH_WORDING = "zh-wording"  # kube-scheduler's messages in Chinese, as a localized platform writes them
    CONTROLLER_RECREATES = "controller-recreates"  # a Job controller recreates pods the platform took away
    THROTTLED = "throttled"  # 429 with Retry-After now and then, bursts of 503/500
    WATCH_CUTS = "watch-cuts"  # the server closes every watch stream after a few seconds
    WATCH_EXPIRY = "watch-expiry"  # history compacted every few seconds: old and long watches end with 410 Gone
    SLOW_API = "slow-api"  # 50-250 ms added to every API request
    AUDIT_METADATA = "audit-metadata"  # the audit log is written at the Metadata level only
    ENDPOINTS_LAGGING = "endpoints-lagging"  # EndpointSlices follow pods after a seeded 1-3 s (a batch period)


# Profiles that decide, each its own way, how a preempted pod is stopped: at most one of them at a time.
EVICTION_WORDING = (Behaviour.KUEUE_REQUEUE, Behaviour.VOLCANO_WORDING, Behaviour.KAI_WORDING)


def parse_behaviours(value: str | None) -> frozenset[Behaviour]:
    """Parse ``--behaviour a,b``; an unknown name is refused with the list of known ones."""
    out = parse_profiles(value, Behaviour, "--behaviour", "behaviours", "behaviour profile")
    clash = sorted(b.value for b in EVICTION_WORDING if b in out)
    if len(clash) > 1:
        raise ConfigError("--behaviour", [f"behaviours: {' and '.join(clash)} each decide how a preempted pod is "
                                          "stopped; choose one of them"])
    return out


def seeded(seed: int, *parts: object) -> random.Random:
    """A random generator fixed by the behaviour seed and ``parts`` (e.g. a pod's namespace and name)."""
    return random.Random("/".join([str(seed), *map(str, parts)]))
