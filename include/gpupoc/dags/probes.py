"""Class-specific probes run alongside the wave, and their collectors (filled per class)."""

from __future__ import annotations

PROBES: dict = {}
COLLECTORS: dict = {}
