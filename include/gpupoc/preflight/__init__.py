"""Preflight: what a plan needs of the cluster and its evidence sources, checked before the first run.

``registry`` holds the typed checks (add one with ``@check``); ``runner.run_preflight`` runs them in order;
``gpupoc preflight`` prints one line per result and the first task of every class DAG runs the checks its
class needs (``gpupoc.steps.preflight``).
"""
