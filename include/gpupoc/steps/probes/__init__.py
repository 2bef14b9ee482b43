"""Probes more than one class runs, and their writers: the services' scale and node failure (``services``), and
what every probe uses (``common``).

Each probe is ``step(ctx) -> dict`` (a small summary for XCom); what it observed goes to the run's
``files/`` or tables. They run while the class holds the GPU lease (``gpupoc.dags.lease``). A class's own
probes live in its folder under ``gpupoc.classes``; which class runs which is declared in its
``definition.py``.
"""
