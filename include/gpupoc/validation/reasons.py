"""Why a check or a table is what it is, worded in the report's language from a reason code and its values.

Validation stores ``reason_code`` and ``reason_args`` beside the English ``reason``; the report words them
again in Chinese. The templates are data: ``reasons.json`` next to this module. A value may itself be a
reason (``{"code": ..., "args": {...}}``), worded in the same language.
"""

from __future__ import annotations

import json
from functools import lru_cache
from pathlib import Path
from typing import Any

REASONS_FILE = Path(__file__).parent / "reasons.json"


@lru_cache(maxsize=None)
def templates(language: str) -> dict[str, str]:
    """The reason templates of one language (English for a language without its own)."""
    data = json.loads(REASONS_FILE.read_text(encoding="utf-8"))
    return {**data["en"], **data.get(language, {})}


class _Keep(dict):
    def __missing__(self, key: str) -> str:  # a template naming a value the reason lacks keeps its placeholder
        return "{" + key + "}"


def word(code: str, args: dict[str, Any] | None = None, language: str = "en", fallback: str = "") -> str:
    """The reason ``code`` with ``args`` in ``language``; ``fallback`` when the code is unknown or empty."""
    table = templates(language)
    if not code or code not in table:
        return fallback
    if (args or {}).get("bad") == 0 and f"{code}_none" in table:  # "all 55 rows as expected", where worded so
        code = f"{code}_none"
    values = {k: (word(v.get("code", ""), v.get("args"), language, str(v.get("text", "")))
                  if isinstance(v, dict) and "code" in v else v) for k, v in (args or {}).items()}
    return table[code].format_map(_Keep(values))
