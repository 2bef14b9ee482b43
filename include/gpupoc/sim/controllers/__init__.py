"""The simulated cluster's controllers; ``loop`` builds them on the cluster state and drives them.

Modules: ``kueue`` (queue manager) with ``kueue_types``, ``kueue_quota`` (cohort arithmetic), ``kueue_admit``
(admission cycle), ``kueue_preempt`` (preemption policies), ``kueue_groups`` (pod groups) and ``kueue_evict``
(eviction and requeue); ``scheduler`` (kube-scheduler) with the pure rules of ``scheduling``, ``preemption``,
``placement`` (its filters lent to the gang schedulers), its ``wording`` and ``release`` behaviours; the gang
schedulers ``volcano`` (+ ``volcano_status``) and ``kai`` (+ ``kai_status``) on ``gang`` (sessions,
all-or-nothing placement), ``gang_jobs`` (a session's jobs), ``podgroups`` (membership), ``shares`` (fair
shares) and ``gang_wording``; ``disruption`` (what a taken-away pod goes through), ``recreate`` (a Job
controller), ``kubelet*`` (containers), ``nodes`` (node failures) and ``actors`` (the controllers' identities
in the audit log). No controller imports another's class: they meet in ``sim.ports`` (ports and hooks),
wired by ``loop.build_controllers``.
"""
