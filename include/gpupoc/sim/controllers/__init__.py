"""The simulated cluster's controllers; ``loop`` builds them on the cluster state and drives them.

Modules: ``kueue`` (queue manager) with ``kueue_evict`` (eviction and requeue), ``scheduler`` with the pure
rules of ``scheduling``, its ``wording`` and ``release`` behaviours, ``disruption`` (what a taken-away pod goes
through), ``recreate`` (a Job controller), ``kubelet*`` (containers), ``nodes`` (node failures) and ``actors``
(the controllers' identities in the audit log).
"""
