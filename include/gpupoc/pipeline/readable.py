"""Which of a platform's texts explain a wait to a user, which only say that it waits, and what they name.

A scheduling gate alone, an empty message, kube-scheduler's or Volcano's "0/N nodes are available" with no
resource named, Volcano's "Pod ns/p can possibly be assigned to <node>" (task reason ``Schedulable``: the pod
fit, the gang did not), its "all nodes are unavailable" and KAI's bare "Unable to schedule podgroup" are
placeholders: they never count as an explanation. Everything else the scheduler wrote (Kueue's
``QuotaReserved`` message, a PodGroup's gang or queue message, a fit error naming a resource) does.
"""

from __future__ import annotations

import re

# (reason, message pattern) pairs a user learns nothing from; a None reason matches any reason.
_PLACEHOLDERS: list[tuple[str | None, re.Pattern]] = [
    ("SchedulingGated", re.compile(r".*", re.S)),
    (None, re.compile(r"^scheduling is blocked due to non-empty scheduling gates\.?$", re.I)),
    (None, re.compile(r"^0/\d+ nodes are (un)?available[.:]?$", re.I)),
    (None, re.compile(r"^pod \S+/\S+ can possibly be assigned to \S*$", re.I)),
    (None, re.compile(r"^all nodes are unavailable\.?$", re.I)),
    (None, re.compile(r"^unable to schedule podgroup[.:]?$", re.I)),
]

ACCEPTED = ("the scheduler's own reason naming what blocks the workload (a resource, a quota, the queue ahead or "
            "its gang); a scheduling gate alone, an empty message, '0/N nodes are available' without a resource, "
            "Volcano's 'can possibly be assigned' and KAI's bare 'Unable to schedule podgroup' do not count")


def readable(reason: str | None, message: str | None) -> bool:
    """Whether ``message`` (with its ``reason``) tells a user why the workload waits."""
    text = (message or "").strip()
    if not text:
        return False
    for want, rx in _PLACEHOLDERS:
        if (want is None or reason == want) and rx.match(text):
            return False
    return True


# What the platform's text says, by pattern (kube-scheduler, Kueue, Volcano, KAI wording).
_MESSAGE_CLASSES: list[tuple[str, re.Pattern]] = [
    ("gated", re.compile(r"scheduling ?gate", re.I)),
    ("quota", re.compile(r"exceeded quota|quota (resource )?insufficient|OverQuota|OverLimit|over quota|overused|"
                         r"insufficient (unused )?quota|couldn't assign flavors|exceeds? .*quota|quota has reached",
                         re.I)),
    ("insufficient_gpus", re.compile(r"Insufficient nvidia\.com/gpu|NotEnoughResources|not enough (gpu|resources)|"
                                     r"enough resources were found", re.I)),
    ("gang", re.compile(r"gang|minAvailable|minMember|pod group is not ready|group has fewer", re.I)),
    ("queue", re.compile(r"position|pending in (the )?queue|waiting for (its turn|admission)|higher priority|"
                         r"Priority|Inqueue", re.I)),
    ("placement", re.compile(r"didn't match|untolerated taint|node affinity|unschedulable", re.I)),
]


def classify_message(text: str | None) -> set[str]:
    """The causes a platform message names (``{"insufficient_gpus"}`` for kube-scheduler's FailedScheduling)."""
    if not text:
        return set()
    return {name for name, rx in _MESSAGE_CLASSES if rx.search(text)}
