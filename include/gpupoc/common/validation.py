"""Turn pydantic validation errors into ``path: message`` lines such as ``tenants[1].quota.gpus: ...``."""

from __future__ import annotations

from pathlib import Path
from typing import TypeVar

import yaml
from pydantic import BaseModel, ValidationError

from gpupoc.exceptions import ConfigError

M = TypeVar("M", bound=BaseModel)


def error_path(loc: tuple) -> str:
    """Render a pydantic location tuple as ``a.b[2].c``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out or "(root)"


def error_lines(exc: ValidationError) -> list[str]:
    """One line per error: path, what is expected, and the value given."""
    lines = []
    for err in exc.errors():
        loc = tuple(p for p in err["loc"] if not (isinstance(p, str) and p.startswith("function-")))
        msg = err["msg"]
        if msg.startswith("Value error, "):
            msg = msg[len("Value error, "):]
        given = err.get("input")
        if err["type"] != "missing" and not isinstance(given, (dict, list)):
            msg += f", got {given!r}"
        lines.append(f"{error_path(loc)}: {msg}")
    return lines


def load_yaml_model(model: type[M], path: str | Path, what: str) -> M:
    """Read a YAML file into ``model``; raise ConfigError listing every problem with its path."""
    return parse_model(model, read_yaml(path, what), str(path))


def read_yaml(path: str | Path, what: str) -> object:
    """The data of a YAML file; ConfigError naming the file when it is missing or not YAML."""
    p = Path(path)
    if not p.is_file():
        raise ConfigError(str(p), [f"(file): {what} not found; pass an existing YAML file"])
    try:
        return yaml.safe_load(p.read_text(encoding="utf-8"))
    except yaml.YAMLError as exc:
        raise ConfigError(str(p), [f"(yaml): not valid YAML: {exc}"]) from exc


def parse_model(model: type[M], data: object, source: str) -> M:
    """Validate plain data into ``model``; raise ConfigError with one line per problem."""
    if not isinstance(data, dict):
        raise ConfigError(source, [f"(root): expected a mapping, got {type(data).__name__}"])
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        raise ConfigError(source, error_lines(exc)) from None
