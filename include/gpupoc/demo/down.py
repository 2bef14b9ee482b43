"""``gpupoc down``: stop every process ``gpupoc demo`` started (``var/demo/pids.json``), by pid."""

from gpupoc.demo.cli import register_down as register

__all__ = ["register"]
