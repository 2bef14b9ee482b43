"""Files a plan names: refuse the ones that must exist now, warn about the ones that appear later.

A kubeconfig in the simulated cluster's data directory is written by ``gpupoc sim serve`` when the cluster
starts, and log files are written by the services that produce them, so a missing one is a warning. Each
finding is one ``path: message`` line, like every other plan error.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gpupoc.common.constants import SIM_DATA_DIR, SIM_STATE_ENTRIES
from gpupoc.plan.document import Plan

# The real control plane's directory (``gpupoc controlplane up``) also holds a ``pki``: its ``ports.json`` and
# etcd data tell it apart from the simulated cluster's.
CONTROL_PLANE_ENTRIES = ("ports.json", "etcd")


@dataclass
class FileFindings:
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def in_sim_data_dir(path: Path) -> bool:
    """True when ``path`` lies in the simulated cluster's data directory: the default one (``var/sim``, from
    whichever directory the cluster is started) or one that already holds the cluster's state."""
    parent = path.parent
    if any((parent / entry).exists() for entry in CONTROL_PLANE_ENTRIES):
        return False
    return (parent.parts[-len(SIM_DATA_DIR.parts):] == SIM_DATA_DIR.parts
            or any((parent / entry).exists() for entry in SIM_STATE_ENTRIES))


def check_files(plan: Plan, kubeconfig_later: bool = False) -> FileFindings:
    """Every file problem of ``plan``; relative paths resolve against the plan's directory. With
    ``kubeconfig_later`` a missing kubeconfig is a warning (``gpupoc cluster kubeconfig`` is writing it)."""
    found = FileFindings()
    if plan.platform.kubeconfig:
        _check_kubeconfig(plan, found, kubeconfig_later)
    if plan.report.scorecard:
        _check_file(plan, found, "report.scorecard", plan.report.scorecard,
                    "write the reviewers' scorecard there (YAML or JSON; `reviewers: []` until they score) or "
                    "remove report.scorecard and give the scores in the report's trigger form")
    sources = plan.evidence_sources
    audit = sources.audit
    for key, value, producer in (
            ("audit_log_path", sources.audit_log_path, "the API server"),
            ("audit.path", getattr(audit, "path", None), "the API server"),
            ("audit.record", getattr(audit, "record", None), "the audit webhook receiver (gpupoc audit webhook up)"),
            ("alert_receiver_record", sources.alert_receiver_record, "the alert webhook receiver")):
        if value:
            _check_log(plan, found, f"evidence_sources.{key}", value, producer)
    return found


def _describe(plan: Plan, value: str) -> tuple[Path, str]:
    path = plan.resolve_path(value)
    shown = repr(value) if str(path) == value else f"{value!r} ({path})"
    return path, shown


def _check_kubeconfig(plan: Plan, found: FileFindings, later: bool = False) -> None:
    path, shown = _describe(plan, plan.platform.kubeconfig or "")
    if path.exists() and not path.is_file():
        found.errors.append(f"platform.kubeconfig: {shown} is not a file; point it at a kubeconfig file")
    elif not path.exists() and later:
        found.warnings.append(f"platform.kubeconfig: {shown} does not exist yet; `gpupoc cluster kubeconfig` "
                              "writes it")
    elif not path.exists() and in_sim_data_dir(path):
        found.warnings.append(f"platform.kubeconfig: {shown} does not exist yet; `gpupoc sim serve` writes it "
                              "when the simulated cluster starts (`make sim` or `make demo`)")
    elif not path.exists():
        found.errors.append(f"platform.kubeconfig: {shown} not found; point it at an existing kubeconfig "
                            "(relative paths resolve against the plan's directory), or use kubernetes_conn_id "
                            "or in_cluster instead")


def _check_file(plan: Plan, found: FileFindings, where: str, value: str, fix: str) -> None:
    path, shown = _describe(plan, value)
    if not path.exists():
        found.errors.append(f"{where}: {shown} not found; {fix}")
    elif not path.is_file():
        found.errors.append(f"{where}: {shown} is not a file; {fix}")


def _check_log(plan: Plan, found: FileFindings, where: str, value: str, producer: str) -> None:
    """A log appended by a running service: a directory is an error, a missing file a warning."""
    path, shown = _describe(plan, value)
    if path.exists() and not path.is_file():
        found.errors.append(f"{where}: {shown} is a directory; point it at the file {producer} writes")
    elif not path.exists():
        later = ("`gpupoc sim serve` writes it when the simulated cluster starts" if in_sim_data_dir(path)
                 else f"{producer} must write it there before the classes that read it run")
        found.warnings.append(f"{where}: {shown} does not exist yet; {later}")
