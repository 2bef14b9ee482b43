"""The two sides compared field by field, each difference matched against the accepted list, and the
table of differences as Markdown."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import yaml

from gpupoc.exceptions import ConfigError
from gpupoc.fidelity.model import NOT_RUN, Difference, ScenarioResult, StepRecord

ACCEPTED = Path(__file__).with_name("accepted.yaml")
ABSENT = "absent"


def differences(simulated: ScenarioResult, real: ScenarioResult) -> list[Difference]:
    """Every field that reads differently; a step not run on either side is one difference (never equal)."""
    out: list[Difference] = []
    for step in sorted(set(simulated.steps) | set(real.steps)):
        sim, rl = simulated.steps.get(step), real.steps.get(step)
        sim_why, real_why = _why_not_run(sim), _why_not_run(rl)
        if sim is None or rl is None or sim_why or real_why:
            out.append(Difference(step, "(step)", sim_why or "run", real_why or "run"))
            continue
        for name in sorted(set(sim.observations) | set(rl.observations)):
            a, b = sim.observations.get(name, ABSENT), rl.observations.get(name, ABSENT)
            if a != b:
                out.append(Difference(step, name, a, b))
    return out


def _why_not_run(rec: StepRecord | None) -> str:
    if rec is None:
        return f"{NOT_RUN}: the step is not in this run"
    return f"{NOT_RUN}: {rec.not_run}" if rec.not_run else ""


@dataclass(frozen=True)
class Accepted:
    """A difference accepted as a known limit: where (step, field), optionally the exact values, why, and the
    test that shows it. ``timing`` says why the real side shows it only on some runs (a race inside the real
    component); such an entry is never called stale for being unseen once."""

    step: str
    field: str
    why: str
    test: str
    simulated: str | None = None
    real: str | None = None
    timing: str | None = None

    def covers(self, diff: Difference) -> bool:
        return (self.step == diff.step and self.field == diff.field
                and (self.simulated is None or self.simulated == diff.simulated)
                and (self.real is None or self.real == diff.real))


def load_accepted(path: Path = ACCEPTED) -> list[Accepted]:
    """The accepted list; an entry missing its step, field, why or test is named with the fix."""
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(str(path), [f"cannot read the accepted differences ({exc})"]) from None
    out = []
    for i, entry in enumerate(data.get("accepted") or []):
        missing = [k for k in ("step", "field", "why", "test") if not entry.get(k)]
        if missing:
            raise ConfigError(str(path), [f"accepted[{i}]: missing {', '.join(missing)}; fix: every accepted "
                                          "difference names its step, field, why it is a known limit and the "
                                          "test showing it"])
        out.append(Accepted(str(entry["step"]), str(entry["field"]), str(entry["why"]), str(entry["test"]),
                            _opt(entry.get("simulated")), _opt(entry.get("real")), _opt(entry.get("timing"))))
    return out


def _opt(value: object) -> str | None:
    return None if value is None else str(value)


def unaccepted(diffs: list[Difference], accepted: list[Accepted]) -> list[Difference]:
    """The differences no accepted entry covers (a new difference fails the suite)."""
    return [d for d in diffs if not any(a.covers(d) for a in accepted)]


def stale(accepted: list[Accepted], diffs: list[Difference]) -> list[Accepted]:
    """Accepted entries no difference shows any more (remove them), leaving out those whose ``timing`` says the
    real side shows them only on some runs."""
    return [a for a in accepted if not a.timing and not any(a.covers(d) for d in diffs)]


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def markdown(diffs: list[Difference], accepted: list[Accepted], simulated: str = "simulated",
             real: str = "real") -> str:
    """The table: step, field, the two values, and the accepted entry's why (or **new**)."""
    lines = [f"| step | field | {simulated} | {real} | status |", "|---|---|---|---|---|"]
    for d in diffs:
        entry = next((a for a in accepted if a.covers(d)), None)
        status = f"known limit: {entry.why}" if entry else "**new**"
        if entry and entry.timing:
            status += f" (seen on some runs only: {entry.timing})"
        lines.append(f"| {d.step} | {_cell(d.field)} | {_cell(d.simulated)} | {_cell(d.real)} | {_cell(status)} |")
    return "\n".join(lines) + "\n"
