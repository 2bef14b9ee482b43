"""Which of a platform's texts explain a wait to a user, and which only say that it waits.

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
