"""Read the Prometheus text exposition format in tests: samples with their labels in order, HELP and TYPE."""

from __future__ import annotations

import re

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{(.*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"')


def parse_exposition(text: str) -> tuple[list[tuple[str, list[tuple[str, str]], float]], dict, dict]:
    """Samples as (name, ordered label pairs, value), plus HELP and TYPE per family; fails on bad lines."""
    samples, helps, types = [], {}, {}
    for line in text.splitlines():
        if line.startswith("# HELP "):
            name, _, help_ = line[7:].partition(" ")
            helps[name] = help_
        elif line.startswith("# TYPE "):
            name, _, type_ = line[7:].partition(" ")
            types[name] = type_
        elif line:
            m = _SAMPLE.match(line)
            assert m, f"not a valid sample line: {line!r}"
            labels = _LABEL.findall(m.group(3) or "")
            samples.append((m.group(1), labels, float(m.group(4))))
    return samples, helps, types


def series(samples, name: str, **match: str) -> list[tuple[dict, float]]:
    """The (labels dict, value) of ``name`` whose labels include ``match``."""
    out = []
    for n, labels, value in samples:
        d = dict(labels)
        if n == name and all(d.get(k) == v for k, v in match.items()):
            out.append((d, value))
    return out
