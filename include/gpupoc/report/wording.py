"""The report's words in its language: the string table, check signals and reasons.

Every sentence of a report comes from here, so a Chinese report is Chinese throughout: the string table
(``templates/strings.<lang>.json``), the pass signals (``templates/checks.<lang>.json``; the suites hold
English) and the reasons validation stored as codes (``gpupoc.validation.reasons``).
"""

from __future__ import annotations

import ast
import json
from functools import lru_cache
from pathlib import Path

from gpupoc.exceptions import ConfigError
from gpupoc.validation.models import CheckOutcome
from gpupoc.validation.reasons import word

TEMPLATES = Path(__file__).parent / "templates"
LANGUAGES = ("en", "zh")


@lru_cache(maxsize=None)
def strings(language: str) -> dict[str, str]:
    """The string table of one language (``templates/strings.<lang>.json``)."""
    if language not in LANGUAGES:
        raise ConfigError("report.language", [f"report.language: expected one of {list(LANGUAGES)}, got {language!r}"])
    return json.loads((TEMPLATES / f"strings.{language}.json").read_text(encoding="utf-8"))


@lru_cache(maxsize=None)
def check_signals(language: str) -> dict[str, str]:
    """Check id -> pass signal in ``language`` (``templates/checks.<lang>.json``); the suites hold English."""
    p = TEMPLATES / f"checks.{language}.json"
    return json.loads(p.read_text(encoding="utf-8")) if p.is_file() else {}


class Wording:
    """Words of one language for the report's builders and templates."""

    def __init__(self, language: str):
        self.language = language
        self.table = strings(language)
        self.signals = check_signals(language)

    def t(self, key: str, **values: object) -> str:
        """The string ``key`` (its last segment when the table lacks it), with ``values`` filled in."""
        text = self.table.get(key, key.split(".", 1)[-1])
        return text.format(**values) if values else text

    def item(self, item_id: str) -> str:
        return self.table.get(f"item.{item_id}", item_id)

    def items(self, item_ids: list[str]) -> str:
        return self.t("list_sep").join(self.item(i) for i in item_ids)

    def signal(self, check: CheckOutcome) -> str:
        return self.signals.get(check.check_id, check.signal)

    def check_reason(self, check: CheckOutcome) -> str:
        """The check's reason in this language (its stored English text for a reason without a code); in another
        language than English a column is named by its header and a sample of values is worded."""
        args = check.reason_args
        if self.language != "en" and args:
            args = {**args, **({"column": self.table.get(f"field.{args['column']}", args["column"])}
                               if isinstance(args.get("column"), str) else {}),
                    **({"sample": self.sample(args["sample"])} if isinstance(args.get("sample"), str) else {})}
        return word(check.reason_code, args, self.language, check.reason)

    def sample(self, text: str) -> str:
        """Sample values as validation stored them (a Python list's repr), worded: no value, yes/no, quotes."""
        try:
            values = ast.literal_eval(text)
        except (ValueError, SyntaxError):
            return text
        if not isinstance(values, (list, tuple)):
            values = [values]
        shown = [self.t("cell.no_value") if v is None or v == "[]" else self.t("cell.yes" if v else "cell.no")
                 if isinstance(v, bool) else self.t("quote.mark", text=v) if isinstance(v, str) else str(v)
                 for v in values]
        return self.t("list_sep").join(shown)

    def reason(self, code: str, args: dict | None = None) -> str:
        return word(code, args, self.language, code)
