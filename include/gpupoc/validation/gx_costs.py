"""What validation spares GX of its own per-run overhead, none of it changing a result: the project's
template ``config_variables.yml`` parsed at every setting read, the project file written after every change,
and the Data Docs page templates compiled again for every page builder."""

from __future__ import annotations

from contextlib import contextmanager
from pathlib import Path
from typing import Any, Iterator


def drop_template_config_variables(docs_dir: Path) -> None:
    """Remove the GX project's ``config_variables.yml`` while it is GX's untouched template (comments only):
    GX parses that file again at every read of a project setting, hundreds of times a validation, and reads
    no file as no variables. A project once made is never made again, so the file does not come back."""
    from great_expectations.data_context.templates import CONFIG_VARIABLES_TEMPLATE

    path = docs_dir / "gx" / "uncommitted" / "config_variables.yml"
    try:
        if path.read_text(encoding="utf-8") == CONFIG_VARIABLES_TEMPLATE:
            path.unlink()
    except FileNotFoundError:
        pass


@contextmanager
def saved_once(ctx: Any) -> Iterator[None]:
    """GX writes its whole project file (every class's data source) after each change: a data source, an asset,
    each suite's batch definition, ten or more times a run. Within this block the changes are only kept in
    memory, where GX reads them from, and the file is written once at its end, also when the block raised."""
    save = ctx._save_project_config
    ctx._save_project_config = lambda *a, **k: None
    try:
        yield
    finally:
        del ctx._save_project_config  # the class's own again
        save()


class _CompiledTemplates:
    """A jinja2 bytecode cache kept in memory for the process. A template whose source changed is compiled
    again (jinja2 checks the source's checksum against the one stored with the code)."""

    def __init__(self) -> None:
        import jinja2

        class Cache(jinja2.BytecodeCache):
            def __init__(self) -> None:
                self.codes: dict[str, bytes] = {}

            def load_bytecode(self, bucket: Any) -> None:
                code = self.codes.get(bucket.key)
                if code is not None:
                    bucket.bytecode_from_string(code)

            def dump_bytecode(self, bucket: Any) -> None:
                self.codes[bucket.key] = bucket.bytecode_to_string()

        self.cache = Cache()


_TEMPLATES: list[_CompiledTemplates] = []


def cache_view_templates() -> None:
    """Give every GX Data Docs view this process makes one shared cache of compiled templates: GX makes a new
    jinja2 environment per page builder, so each validation compiled the same fifty templates again."""
    if _TEMPLATES:
        return
    from great_expectations.render.view.view import DefaultJinjaView

    _TEMPLATES.append(_CompiledTemplates())
    cache, init = _TEMPLATES[0].cache, DefaultJinjaView.__init__

    # GX's own parameters, named: GX gives a view the project's custom styles by the names its __init__ takes
    def __init__(self: Any, custom_styles_directory: Any = None, custom_views_directory: Any = None) -> None:
        init(self, custom_styles_directory=custom_styles_directory, custom_views_directory=custom_views_directory)
        self.env.bytecode_cache = cache

    DefaultJinjaView.__init__ = __init__  # type: ignore[method-assign]
