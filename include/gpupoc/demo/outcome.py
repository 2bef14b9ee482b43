"""What the demo prints at the end: the decision with its reasons, read from the report's JSON."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from gpupoc.exceptions import ConfigError

DECISIONS = ("go-live", "limited-go-live", "postpone", "later-optimization")
# what poc_report writes, in the order the closing block lists it (report.pdf only with Chromium)
REPORT_FORMATS = ("summary.html", "report.md", "report.json", "report.junit.xml", "report.pdf")


@dataclass(frozen=True)
class Outcome:
    """The decision of one report, its reasons and the items that did not pass (id -> verdict)."""

    decision: str
    reasons: list[str]
    open_items: dict[str, str] = field(default_factory=dict)
    report_dir: Path | None = None

    @property
    def html(self) -> Path | None:
        return self.report_dir / "report.html" if self.report_dir else None

    def outputs(self) -> list[Path]:
        """The report's other formats that were written, then its sealed bundle (beside the directory)."""
        if not self.report_dir:
            return []
        from gpupoc.report.bundle import bundle_path

        found = [self.report_dir / n for n in REPORT_FORMATS] + [bundle_path(self.report_dir)]
        return [p for p in found if p.is_file()]


def extract_outcome(report: dict, report_dir: Path | None = None) -> Outcome:
    """The decision of a report JSON (schema ``gpupoc.report``); ConfigError naming the field when absent."""
    decision = report.get("decision")
    if decision not in DECISIONS:
        raise ConfigError("report.json", [f"decision: expected one of {list(DECISIONS)}, got {decision!r}; "
                                          "the report was not written by `gpupoc report`"])
    reasons = [str(r) for r in report.get("decision_reasons") or []]
    open_items = {str(i.get("id")): str(i.get("verdict")) for i in report.get("items") or []
                  if i.get("verdict") not in (None, "pass")}
    return Outcome(decision, reasons, open_items, report_dir)


def read_outcome(report_dir: Path) -> Outcome:
    """The outcome of the report written under ``report_dir`` (its ``report.json``)."""
    path = Path(report_dir) / "report.json"
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        raise ConfigError(str(path), [f"(file): no report here ({exc.strerror}); did poc_report succeed?"]) from None
    except ValueError as exc:
        raise ConfigError(str(path), [f"(parse): {exc}"]) from None
    return extract_outcome(data, Path(report_dir))


def summary_lines(outcome: Outcome, ui_url: str, passwords_file: str, report_run: str | None, wall_seconds: float,
                  runs: dict[str, str], reviewers: tuple[str, ...] = ()) -> list[str]:
    """The closing block: decision and reasons, the report, the UI and where its logins' passwords are (never
    the passwords themselves), the time taken."""
    from gpupoc.demo.progress import elapsed

    lines = ["", "=" * 72, f"Decision: {outcome.decision}"]
    lines += [f"  - {r}" for r in outcome.reasons] or ["  - every item passed"]
    if outcome.open_items:
        lines.append("Items not passed: " + ", ".join(f"{k} ({v})" for k, v in sorted(outcome.open_items.items())))
    lines.append("Test-class runs: " + ", ".join(f"{d.removeprefix('poc_')} {s}" for d, s in runs.items()))
    if outcome.html:
        lines.append(f"Report: {outcome.html}")
        lines += [f"        {p}" for p in outcome.outputs()]
        if not (outcome.report_dir / "report.pdf").is_file():
            lines.append("        (no report.pdf: headless Chromium is missing; install it with `make test-deps`)")
    lines.append(ui_login(ui_url, passwords_file))
    if reviewers:
        lines.append(f"Reviewers sign off in the poc_report form logged in as {', '.join(reviewers)} "
                     f"(passwords in {passwords_file}; docs/signoff.md)")
    if report_run:
        lines.append(f"Report in the UI: {ui_url}/gpupoc/reports/{report_run}/")
    lines.append(f"Demo time: {elapsed(wall_seconds)} (stop everything with `make down`)")
    lines.append("=" * 72)
    return lines


def runs_only_lines(ui_url: str, passwords_file: str, wall_seconds: float, runs: dict[str, str],
                    evidence_root: Path) -> list[str]:
    """The closing block of a demo that left its report to ``gpupoc compare``: the runs, where their evidence
    is, the UI, the time taken."""
    from gpupoc.demo.progress import elapsed

    return ["", "=" * 72,
            "Test-class runs: " + ", ".join(f"{d.removeprefix('poc_')} {s}" for d, s in runs.items()),
            f"Evidence: {evidence_root} (no report here: gpupoc compare judges it)",
            ui_login(ui_url, passwords_file),
            f"Demo time: {elapsed(wall_seconds)} (stop everything with `make down`)", "=" * 72]


def ui_login(ui_url: str, passwords_file: str) -> str:
    """The UI's address and its administrator's login; the password stays in its file (0600), out of the log."""
    return f"Airflow UI: {ui_url}  (login: admin, password in {passwords_file})"
