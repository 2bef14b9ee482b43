"""Typed records of the fidelity suite: a step's observations, a scenario's result, a difference."""

from __future__ import annotations

from dataclasses import dataclass, field

NOT_RUN = "not run"


@dataclass
class StepRecord:
    """What a client saw in one step: ``observations`` maps a field (``pod.reason``) to a normalised value;
    ``not_run`` names why the step could not run (never counted as equal)."""

    step: str
    observations: dict[str, str] = field(default_factory=dict)
    not_run: str = ""

    def see(self, name: str, value: object) -> None:
        self.observations[name] = render(value)

    def to_dict(self) -> dict:
        return {"step": self.step, "observations": dict(self.observations), "not_run": self.not_run}

    @classmethod
    def from_dict(cls, data: dict) -> "StepRecord":
        return cls(str(data["step"]), {str(k): str(v) for k, v in (data.get("observations") or {}).items()},
                   str(data.get("not_run") or ""))


@dataclass
class ScenarioResult:
    """Every step of one run, on one side (``simulated`` or ``real``), and the server's version."""

    side: str
    version: str = ""
    steps: dict[str, StepRecord] = field(default_factory=dict)

    def record(self, step: str) -> StepRecord:
        return self.steps.setdefault(step, StepRecord(step))

    def to_dict(self) -> dict:
        return {"side": self.side, "version": self.version, "steps": [s.to_dict() for s in self.steps.values()]}

    @classmethod
    def from_dict(cls, data: dict) -> "ScenarioResult":
        steps = [StepRecord.from_dict(s) for s in data.get("steps") or []]
        return cls(str(data["side"]), str(data.get("version") or ""), {s.step: s for s in steps})


@dataclass(frozen=True)
class Difference:
    """One field of one step that reads differently on the two sides (``absent`` where a side lacks it)."""

    step: str
    field: str
    simulated: str
    real: str


def render(value: object) -> str:
    """A value as the table shows it: lists joined sorted, booleans lower case, None as ``absent``."""
    if value is None:
        return "absent"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple, set, frozenset)):
        return ",".join(sorted(render(v) for v in value)) or "[]"
    return str(value)
