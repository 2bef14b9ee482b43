"""The GX project of an evidence root, opened once per process while its project file stays as this process
left it. Opening one parses its whole ``great_expectations.yml`` (every class's data source), and saving its
settings writes it again: a third of a validation's time when a report validates many runs of one root."""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SITE = "local_site"


def data_docs_index(docs_dir: str | Path) -> Path:
    """The stable path of the Data Docs index under the docs (evidence root) directory."""
    return Path(docs_dir) / "data_docs" / SITE / "index.html"


@dataclass
class _Opened:
    context: Any
    project_file: str  # the sha256 of great_expectations.yml as this process last wrote or read it


_OPENED: dict[Path, _Opened] = {}


def _project_file(docs_dir: Path) -> Path:
    return docs_dir / "gx" / "great_expectations.yml"


def _digest(docs_dir: Path) -> str:
    try:
        return hashlib.sha256(_project_file(docs_dir).read_bytes()).hexdigest()
    except OSError:
        return ""


def project_context(docs_dir: Path) -> Any:
    """The file-backed GX context of ``docs_dir``, with this project's Data Docs site and settings. The one
    this process opened before is given again unless another process changed the project file since; call
    ``keep`` under the same validation lock once the context's changes are saved."""
    key = docs_dir.resolve()
    opened = _OPENED.get(key)
    if opened is not None and opened.project_file == _digest(docs_dir):
        return opened.context
    _OPENED.pop(key, None)
    return _opened(docs_dir)


def keep(docs_dir: Path, context: Any) -> None:
    """Remember ``context`` as the project's, as its file now stands."""
    _OPENED[docs_dir.resolve()] = _Opened(context, _digest(docs_dir))


def forget_all() -> None:
    """Open every project afresh from here on."""
    _OPENED.clear()


def _opened(docs_dir: Path) -> Any:
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    import great_expectations as gx
    from great_expectations.data_context.types.base import ProgressBarsConfig

    from gpupoc.validation.gx_costs import cache_view_templates, drop_template_config_variables

    ctx = gx.get_context(mode="file", project_root_dir=str(docs_dir))
    drop_template_config_variables(docs_dir)
    cache_view_templates()
    changed = _point_site_at(ctx, str(data_docs_index(docs_dir).parent) + "/")
    if changed or ctx.variables.analytics_enabled is not False or _bars_on(ctx.variables.progress_bars):
        ctx.variables.progress_bars = ProgressBarsConfig(globally=False)
        ctx.variables.analytics_enabled = False
        ctx.variables.save()  # the whole project file written again: only when a setting changed
    return ctx


def _bars_on(bars: Any) -> bool:
    """Whether GX may draw progress bars (a new project's setting is none; a saved one reads as a dict)."""
    on = bars.get("globally") if isinstance(bars, dict) else getattr(bars, "globally", None)
    return on is not False


def _point_site_at(ctx: Any, site_dir: str) -> bool:
    """Point the project's Data Docs site at ``site_dir`` (the root was copied or moved); True when it changed."""
    sites = ctx.get_config().data_docs_sites or {}
    current = (sites.get(SITE) or {}).get("store_backend", {}).get("base_directory")
    if current == site_dir:
        return False
    if SITE in sites:
        ctx.delete_data_docs_site(SITE)
    ctx.add_data_docs_site(SITE, {
        "class_name": "SiteBuilder", "show_how_to_buttons": False,
        "store_backend": {"class_name": "TupleFilesystemStoreBackend", "base_directory": site_dir},
        "site_index_builder": {"class_name": "DefaultSiteIndexBuilder"}})
    return True
