"""Monitoring: the local Prometheus/Alertmanager stack, its webhook receiver, and the evidence collectors.

Collectors return a :class:`~gpupoc.monitoring.results.CollectorResult`; a source that cannot be reached or
answers nothing for the window gives ``verified=False`` with the source and the reason.
"""
