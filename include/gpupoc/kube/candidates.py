"""What a candidate was: the real scheduler, with the version built, or a simulated mode of it, with the
upstream version it was read from, the behaviours it imitates and the fidelity measured for it.

The catalogue is data (``candidates.yaml`` beside this module): one entry per scheduler mode of the simulated
cluster. ``label_for`` labels one report's candidate from what its runs recorded (the adapter, the API
server's version, the nodes: simulated, KWOK or neither), so a buyer can never mistake an imitation for the
product. On a run on the real control plane (KWOK nodes) kube-scheduler and Kueue are real; on the simulated
cluster every candidate is a simulated mode.
"""

from __future__ import annotations

from enum import Enum
from functools import lru_cache
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from gpupoc.exceptions import ConfigError
from gpupoc.kube.schedulers import SchedulerMode

CATALOGUE = Path(__file__).with_name("candidates.yaml")
PINS = Path(__file__).resolve().parents[3] / "scripts" / "control-plane" / "pins.env"
NOT_RECORDED = "version not recorded"


class FidelityStatus(str, Enum):
    MEASURED = "measured"
    PARTLY_MEASURED = "partly measured"
    NOT_MEASURED = "not measured"


class Fidelity(BaseModel):
    """What was measured of a simulated mode against the real scheduler (nothing: ``not measured``)."""

    model_config = ConfigDict(extra="forbid")
    status: FidelityStatus
    against: str | None = Field(default=None, description="the real scheduler it was measured against")
    what: str = Field(default="", description="what the measurement compared")
    tests: list[str] = Field(default_factory=list, description="the tests that measure it")
    docs: str | None = Field(default=None, description="the docs page (and heading) with the findings")


class WordingMatch(BaseModel):
    """The upstream releases whose source holds every name and text the mode writes: found by searching the
    project's release tags, unlike ``read_from``, which the mode's code records."""

    model_config = ConfigDict(extra="forbid")
    oldest: str = Field(description="the first release whose source holds them all")
    newest: str = Field(description="the newest release checked that still holds them all")
    first_because: str = Field(description="what the releases before ``oldest`` lack")
    checked: str = Field(description="which release tags were searched, and when")
    differences: list[str] = Field(default_factory=list, description="what those releases write that the mode "
                                   "does not (or the other way round)")

    @property
    def span(self) -> str:
        return self.newest if self.oldest == self.newest else f"{self.oldest} to {self.newest}"


class Chinese(BaseModel):
    """The mode's behaviours and what it was measured against, for a Chinese report."""

    model_config = ConfigDict(extra="forbid")
    behaviours: list[str] = Field(default_factory=list)
    against: str | None = None


class SimulatedMode(BaseModel):
    """One scheduler mode of the simulated cluster: the project it imitates and how far that was measured."""

    model_config = ConfigDict(extra="forbid")
    mode: SchedulerMode
    adapter: str = Field(description="the plan's platform.adapter served by this mode")
    project: str
    repository: str = Field(description="the upstream source it was read from (owner/name)")
    read_from: str | None = Field(description="the upstream version read from; None: not recorded")
    read_from_note: str = Field(description="where that version (or its absence) is recorded")
    wording_match: WordingMatch | None = Field(default=None, description="the upstream releases whose source holds "
                                               "the mode's names and texts (checked against their tags)")
    behaviours: list[str] = Field(min_length=1, description="the behaviours the mode imitates")
    fidelity: Fidelity
    real_pin: str | None = Field(default=None, description="pins.env key of the real build served here")
    zh: Chinese = Field(default_factory=Chinese)

    @property
    def version(self) -> str | None:
        """The version a label names: the one recorded, else the newest release its wording matches."""
        return self.read_from or (self.wording_match.newest if self.wording_match else None)

    @property
    def version_words(self) -> str:
        m = self.wording_match
        if self.read_from and m:
            return f"{self.read_from} (its wording matches {m.span})"
        if m:
            return f"{m.newest} (matched by its wording: {m.span})"
        return self.read_from or "(upstream version not recorded)"


class Catalogue(BaseModel):
    model_config = ConfigDict(extra="forbid")
    modes: list[SimulatedMode]

    def by_adapter(self, adapter: str | None) -> SimulatedMode | None:
        return next((m for m in self.modes if m.adapter == adapter), None)

    def by_mode(self, mode: str) -> SimulatedMode | None:
        return next((m for m in self.modes if m.mode.value == mode), None)

    @property
    def real_here(self) -> tuple[str, ...]:
        """The adapters served for real on the real control plane (kube-scheduler, Kueue)."""
        return tuple(m.adapter for m in self.modes if m.real_pin)


@lru_cache(maxsize=4)
def load_catalogue(path: Path = CATALOGUE) -> Catalogue:
    """The catalogue; a ConfigError naming the file and field when it does not load."""
    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
        return Catalogue.model_validate(data)
    except (OSError, yaml.YAMLError) as exc:
        raise ConfigError(str(path), [f"the candidate catalogue does not read: {exc}"]) from None
    except ValidationError as exc:
        raise ConfigError(str(path), [f"{'.'.join(str(p) for p in e['loc'])}: {e['msg']}"
                                      for e in exc.errors()]) from None


def pinned(key: str, pins: Path = PINS) -> str | None:
    """The version ``key`` of the real control plane's pins file; None when the file or the line is absent."""
    try:
        lines = pins.read_text(encoding="utf-8").splitlines()
    except OSError:
        return None
    return next((ln.split("=", 1)[1].strip() for ln in lines if ln.startswith(f"{key}=")), None) or None


class CandidateKind(str, Enum):
    REAL = "real"
    SIMULATED = "simulated"
    NOT_KNOWN = "not_known"  # the runs did not record their nodes, or the scheduler is not served there


class CandidateLabel(BaseModel):
    """What one candidate was, as its report and its comparison column state it."""

    kind: CandidateKind
    adapter: str | None = None
    project: str | None = Field(default=None, description="the scheduler (kube-scheduler, Kueue, Volcano, ...)")
    version: str | None = Field(default=None, description="real: the version built or run; simulated: the "
                                "upstream version read from, else the newest release its wording matches; None: "
                                "neither recorded nor matched")
    wording_matches: str | None = Field(default=None, description="simulated: the upstream releases whose source "
                                        "holds the mode's names and texts (\"v1.13.0 to v1.15.1\")")
    version_recorded: bool = Field(default=False, description="simulated: ``version`` is the one the mode's code "
                                   "records (else matched by its wording)")
    kubernetes_version: str | None = Field(default=None, description="the API server's, as the runs recorded it")
    kwok: bool = Field(default=False, description="on a real control plane whose nodes are KWOK's")
    extras: list[str] = Field(default_factory=list, description="real: what the run switched on beyond the "
                              "scheduler's defaults (DRA GPUs, Workload-API gangs)")
    behaviours: list[str] = Field(default_factory=list, description="simulated: the behaviours it imitates")
    fidelity: FidelityStatus | None = Field(default=None, description="simulated: how far it was measured")
    fidelity_against: str | None = None
    fidelity_docs: str | None = None
    zh_behaviours: list[str] = Field(default_factory=list, description="the behaviours, in Chinese")
    zh_fidelity_against: str | None = None
    text: str = Field(description="the label in one line (English)")

    @property
    def headline(self) -> str:
        """The label without where it ran: "real Kueue v0.17.0", "simulated mode of Volcano (…)"."""
        if self.kind is CandidateKind.NOT_KNOWN:
            return "not known whether real or simulated"
        return self.text.split(" on ", 1)[0]


def _real(entry: SimulatedMode | None, adapter: str, kube: str | None, kwok: bool, pins: Path,
          extras: tuple[str, ...] = ()) -> CandidateLabel:
    version = None
    if entry is not None and kwok and entry.real_pin:  # the build this machine runs beside the control plane
        version = kube if entry.real_pin == "KUBERNETES_VERSION" and kube else pinned(entry.real_pin, pins)
    elif entry is not None and entry.mode is SchedulerMode.KUBE:
        version = kube  # a cluster's own kube-scheduler is its control plane's version
    project = entry.project if entry else adapter
    where = f"Kubernetes {kube or '(version not recorded)'}" + (" (KWOK nodes)" if kwok else "")
    with_ = f" with {' and '.join(extras)}" if extras else ""
    return CandidateLabel(kind=CandidateKind.REAL, adapter=adapter, project=project, version=version,
                          kubernetes_version=kube, kwok=kwok, extras=list(extras),
                          text=f"real {project} {version or '(' + NOT_RECORDED + ')'}{with_} on {where}")


def _simulated(entry: SimulatedMode, kube: str | None) -> CandidateLabel:
    f = entry.fidelity
    measured = f.status.value + (f" against {f.against}" if f.against else "")
    return CandidateLabel(kind=CandidateKind.SIMULATED, adapter=entry.adapter, project=entry.project,
                          version=entry.version, version_recorded=entry.read_from is not None,
                          wording_matches=entry.wording_match.span if entry.wording_match else None,
                          kubernetes_version=kube, behaviours=list(entry.behaviours),
                          fidelity=f.status, fidelity_against=f.against, fidelity_docs=f.docs,
                          zh_behaviours=list(entry.zh.behaviours), zh_fidelity_against=entry.zh.against,
                          text=f"simulated mode of {entry.project} {entry.version_words} on gpupoc's simulated "
                               f"cluster (fidelity: {measured})")


def label_for(adapter: str | None, simulated: bool | None, kwok_nodes: int | None,
              kubernetes_version: str | None, catalogue: Catalogue | None = None, pins: Path = PINS,
              extras: tuple[str, ...] = ()) -> CandidateLabel:
    """The label of a candidate whose runs recorded ``adapter``, whether their nodes were simulated, how many
    were KWOK's and the API server's version (``extras``: what a real run switched on, as it recorded it).
    Not recorded nodes: not known, never assumed real."""
    cat = catalogue or load_catalogue()
    entry = cat.by_adapter(adapter)
    name = (entry.project if entry else adapter) or "the scheduler"
    if simulated is None:
        return CandidateLabel(kind=CandidateKind.NOT_KNOWN, adapter=adapter, project=entry and entry.project,
                              kubernetes_version=kubernetes_version,
                              text=f"{name}: not known whether real or simulated (the runs did not record their nodes)")
    if simulated:
        if entry is None:
            return CandidateLabel(kind=CandidateKind.NOT_KNOWN, adapter=adapter, kubernetes_version=kubernetes_version,
                                  text=f"{name} on gpupoc's simulated cluster: no simulated mode of it is catalogued")
        return _simulated(entry, kubernetes_version)
    kwok = bool(kwok_nodes)
    if kwok and (entry is None or not entry.real_pin):
        return CandidateLabel(kind=CandidateKind.NOT_KNOWN, adapter=adapter, project=entry and entry.project,
                              kubernetes_version=kubernetes_version, kwok=True,
                              text=f"{name}: not served on the real control plane here (only "
                                   f"{', '.join(cat.real_here)} are built); what scheduled the pods is not known")
    return _real(entry, adapter or "", kubernetes_version, kwok, pins, extras)
