"""The Data Docs site's expectation suites and their validation pages, read from the site's files.

The site's own index builds its tables with JavaScript (served from the site's own copies, see
``gpupoc.validation.offline_docs``); this listing needs none, so the suites stay reachable even from a
site built before its assets were installed.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class SuiteEntry:
    """One expectation suite: its page and its validation result pages, newest first."""

    name: str
    page: str
    validations: list[str] = field(default_factory=list)

    @property
    def latest(self) -> str | None:
        return self.validations[0] if self.validations else None


def list_suites(site_dir: Path) -> list[SuiteEntry]:
    """Suites by name (``<class>.<table>``) with links relative to the site's root."""
    exp = site_dir / "expectations"
    if not exp.is_dir():
        return []
    suites: dict[str, SuiteEntry] = {}
    for page in sorted(exp.rglob("*.html")):
        rel = page.relative_to(exp).with_suffix("")
        suites[".".join(rel.parts)] = SuiteEntry(name=".".join(rel.parts), page=page.relative_to(site_dir).as_posix())
    val = site_dir / "validations"
    if val.is_dir():
        for page in val.rglob("*.html"):
            parts = page.relative_to(val).parts
            # validations/<suite path...>/<run name>/<timestamp>/<batch>.html
            if len(parts) < 4:
                continue
            suite = ".".join(parts[:-3])
            if suite in suites:
                suites[suite].validations.append(page.relative_to(site_dir).as_posix())
    for s in suites.values():
        s.validations.sort(key=lambda p: (p.split("/")[-2], p), reverse=True)
    return list(suites.values())
