"""The Prometheus text exposition format as gpupoc's exporters write it (the simulated cluster's and the real-cluster
exporter's): values, labels, families."""

from __future__ import annotations

from typing import Iterable


def fmt_value(v: float) -> str:
    """A sample value as Prometheus prints it: integers without a fraction, floats shortest round-trip."""
    f = float(v)
    if f.is_integer() and abs(f) < 1e15:
        return str(int(f))
    return repr(f)


def _escape(value: str) -> str:
    value = str(value)
    if "\\" in value or '"' in value or "\n" in value:
        return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')
    return value


def label_str(pairs: Iterable[tuple[str, str]]) -> str:
    """``a="1",b="2"`` (the inside of the braces), values escaped."""
    return ",".join(f'{k}="{_escape(v)}"' for k, v in pairs)


class Exposition:
    """Collects metric families in order and renders the text format (HELP, TYPE, samples)."""

    def __init__(self) -> None:
        self._families: dict[str, tuple[str, str, list[str]]] = {}

    def family(self, name: str, type_: str, help_: str) -> None:
        self._families.setdefault(name, (type_, help_, []))

    def add(self, name: str, labels: Iterable[tuple[str, str]] | str, value: float) -> None:
        """One sample; ``labels`` as pairs or as a ready ``label_str``."""
        inner = labels if isinstance(labels, str) else label_str(labels)
        self._families[name][2].append(f"{name}{{{inner}}} {fmt_value(value)}")

    def extend(self, name: str, lines: list[str]) -> None:
        self._families[name][2].extend(lines)

    def render(self) -> str:
        out: list[str] = []
        for name, (type_, help_, samples) in self._families.items():
            out.append(f"# HELP {name} {help_}")
            out.append(f"# TYPE {name} {type_}")
            out.extend(samples)
        return "\n".join(out) + "\n"


class Sink:
    """Sample lines of one object by family (cached between scrapes while the object is unchanged)."""

    def __init__(self) -> None:
        self.lines: dict[str, list[str]] = {}

    def add(self, name: str, labels: str, value: float) -> None:
        self.lines.setdefault(name, []).append(f"{name}{{{labels}}} {fmt_value(value)}")
