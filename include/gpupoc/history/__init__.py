"""Job histories: import (Acme, Helios, Slurm sacct, any CSV), synthesise after published traces, and turn
a window of a history into a replay wave for a POC plan.

Modules (import from them; this package imports nothing so ``gpupoc`` starts fast):
``model`` the typed job table; ``table`` parquet and metadata; ``formats`` the readers (and the trace CSV
writer); ``importer`` import with checks; ``cluster`` what a cluster can run; ``fit`` and ``synth`` the
synthetic generator; ``stats`` summary figures; ``tenants`` users -> tenants; ``replay`` the wave model and
its YAML; ``plan_wave`` history -> wave; ``cli`` the ``gpupoc history`` commands.
"""
