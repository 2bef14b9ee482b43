"""``gpupoc demo`` / ``gpupoc down``: the whole POC on the simulated cluster with one command."""
