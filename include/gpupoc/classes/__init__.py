"""The five test classes, one folder each: what a class adds to the run every class shares.

Each folder holds the class's definition (``definition.py``: its DAG tags, probes, collector, tables and the
figure its summary shows) and its probes and collector. The machinery every class shares stays beneath:
the steps (``gpupoc.steps``: context, wave, observer, collection, validation), the judgements
(``gpupoc.pipeline``), the evidence writer and the report. ``registry.definition`` finds a class's definition.

- ``queue_congestion/``: the wave's waits explained (``collector.py``);
- ``tenant_isolation/``: cross-tenant attempts, quotas, reclaim, GPU memory and vGPU slices (``probes.py``,
  ``reclaim.py``, ``memory_isolation.py``, ``vgpu_slices.py``);
- ``utilization/``: allocated against used GPU-hours (``collector.py``);
- ``fault_recovery/``: injected failures from trigger to recovery (``probes.py``);
- ``audit_trail/``: quota changes, artifact hand-over and the ledger against the audit log (``probes.py``).
"""
