"""Sizes the package keeps: no module over 400 lines, no function over 80.

A function's length is all its lines, from its first decorator or ``def`` to its last line, the functions
defined inside it included (a DAG factory's tasks, an app factory's routes): a reader reads them all. Each nested
function is also measured on its own.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .parsed import SOURCES_GROUP, parsed

pytestmark = pytest.mark.xdist_group(SOURCES_GROUP)


PACKAGE = Path(__file__).resolve().parents[3] / "include" / "gpupoc"
MAX_MODULE_LINES = 400
MAX_FUNCTION_LINES = 80
# Functions allowed over the limit while another change splits them (empty: none is).
LONG_FUNCTIONS_ALLOWED: set[str] = set()


def sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "node_modules" not in p.parts)


def function_lengths(text: str) -> dict[str, int]:
    """``name`` (``Outer.name`` for methods and nested functions) -> lines counted whole, for every function in
    ``text``."""
    out: dict[str, int] = {}

    def visit(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                start = min([child.lineno] + [d.lineno for d in child.decorator_list])
                out[prefix + child.name] = child.end_lineno - start + 1
                visit(child, f"{prefix}{child.name}.")
            elif isinstance(child, ast.ClassDef):
                visit(child, f"{prefix}{child.name}.")
            else:
                visit(child, prefix)

    visit(parsed(text), "")
    return out


def test_no_module_is_over_400_lines():
    long = {str(p.relative_to(PACKAGE)): n for p in sources()
            if (n := len(p.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES}
    assert long == {}, f"modules over {MAX_MODULE_LINES} lines (split them by what they do): {long}"


def test_no_function_is_over_80_lines():
    long = {}
    for p in sources():
        rel = p.relative_to(PACKAGE).as_posix()
        for name, n in function_lengths(p.read_text(encoding="utf-8")).items():
            if n > MAX_FUNCTION_LINES and f"{rel}:{name.rsplit('.', 1)[-1]}" not in LONG_FUNCTIONS_ALLOWED:
                long[f"{rel}:{name}"] = n
    assert long == {}, f"functions over {MAX_FUNCTION_LINES} lines (split them into named steps): {long}"


def test_a_nested_function_counts_in_its_outer_function_and_on_its_own():
    text = ("def outer():\n" + "    x = 1\n" * 3 + "    @task\n    def inner():\n" + "        y = 2\n" * 90
            + "    return x\n")
    assert function_lengths(text) == {"outer": 97, "outer.inner": 92}


def test_a_decorated_function_counts_from_its_first_decorator():
    text = "@a\n@b(\n    1,\n)\ndef f():\n    return 1\n"
    assert function_lengths(text) == {"f": 6}


def test_the_allowed_long_functions_still_exist_and_are_long():
    """An entry whose function was split (or renamed) must leave the list."""
    for entry in LONG_FUNCTIONS_ALLOWED:
        rel, name = entry.split(":")
        lengths = function_lengths((PACKAGE / rel).read_text(encoding="utf-8"))
        assert any(k.rsplit(".", 1)[-1] == name and n > MAX_FUNCTION_LINES for k, n in lengths.items()), (
            f"{entry} is no longer over {MAX_FUNCTION_LINES} lines: drop it from LONG_FUNCTIONS_ALLOWED")
