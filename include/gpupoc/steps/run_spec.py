"""The run's spec: what ``validate_plan``, the run's first task, fixed for every later task.

It travels as the first task's return value (an XCom) and is kept in the evidence (``files/run_spec.json``).
A later task reads it, never the trigger's parameters again, and judges by the plan the run started with: a
plan file edited while the run goes on is refused with the two hashes, not half-applied.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields

from gpupoc.exceptions import ConfigError

RUN_SPEC_FILE = "run_spec"


@dataclass(frozen=True)
class RunSpec:
    """The plan (a path or ``file#platform`` reference) and its sha256, the run's evidence directory, when it
    started and how many wave items it has."""

    plan: str
    plan_hash: str
    run_dir: str
    started_at: str
    pods: int

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict) -> RunSpec:
        """The spec from ``validate_plan``'s output; a missing field names itself and the fix."""
        missing = [f.name for f in fields(cls) if f.name not in (data or {})]
        if missing:
            raise ConfigError("validate_plan's output", [f"{name}: missing; clear the run from validate_plan so it "
                                                         "records the run's spec again" for name in missing])
        return cls(**{f.name: data[f.name] for f in fields(cls)})


def plan_unchanged(spec: RunSpec, current_hash: str) -> None:
    """Refuse a plan whose file changed since the run started (its sha256 is no longer the spec's)."""
    if current_hash != spec.plan_hash:
        raise ConfigError(spec.plan, [f"the plan changed since validate_plan started this run (sha256 "
                                      f"{spec.plan_hash[:12]} then, {current_hash[:12]} now): a run judges by the "
                                      "plan it started with; put the plan back, or trigger a new run to use the "
                                      "edited one"])
