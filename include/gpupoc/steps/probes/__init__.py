"""Class-specific probes run alongside the wave, and the collectors that turn them into evidence tables.

Each probe is ``step(ctx) -> dict`` (a small summary for XCom); what it observed goes to the run's
``files/`` or tables. They run while the class holds the GPU lease (``gpupoc.dags.lease``). Which class
runs which is declared once, in ``gpupoc.steps.class_definitions``.
"""
