"""Parsing a comma-separated list of profile names (``--faults a,b``, ``--behaviour a,b``) into its enum."""

from __future__ import annotations

from enum import Enum
from typing import TypeVar

from gpupoc.exceptions import ConfigError

P = TypeVar("P", bound=Enum)


def parse_profiles(value: str | None, kind: type[P], option: str, field: str, noun: str) -> frozenset[P]:
    """The profiles named in ``value``; an unknown name is refused (``option``, ``field``: "unknown ``noun``")
    with the list of known ones."""
    if not value:
        return frozenset()
    out = set()
    for name in (v.strip() for v in value.split(",")):
        if not name:
            continue
        try:
            out.add(kind(name))
        except ValueError:
            known = ", ".join(p.value for p in kind)
            raise ConfigError(option, [f"{field}: unknown {noun} {name!r}; known: {known}"]) from None
    return frozenset(out)
