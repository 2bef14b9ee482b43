"""Every parameter named ``ctx`` says what it is: a reader meets a ``RunContext`` (or whichever context the
annotation names), never a bare name whose type is found by tracing its callers."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .parsed import SOURCES_GROUP, parsed

pytestmark = pytest.mark.xdist_group(SOURCES_GROUP)


PACKAGE = Path(__file__).resolve().parents[3] / "include" / "gpupoc"


def untyped_contexts(text: str) -> list[str]:
    """``function:line`` of each parameter named ``ctx`` without an annotation in ``text``."""
    out = []
    for node in ast.walk(parsed(text)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            params = [*node.args.posonlyargs, *node.args.args, *node.args.kwonlyargs]
            out += [f"{node.name}:{a.lineno}" for a in params if a.arg == "ctx" and a.annotation is None]
    return out


def test_the_check_finds_an_untyped_context():
    assert untyped_contexts("def f(ctx, n: int): ...\ndef g(ctx: 'RunContext'): ...") == ["f:1"]


def test_no_parameter_named_ctx_is_untyped():
    found = {str(p.relative_to(PACKAGE)): hits for p in sorted(PACKAGE.rglob("*.py"))
             if "node_modules" not in p.parts and (hits := untyped_contexts(p.read_text(encoding="utf-8")))}
    assert not found, f"parameters named ctx without a type (annotate them: ctx: RunContext): {found}"
