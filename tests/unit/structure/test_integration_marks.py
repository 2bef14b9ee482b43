"""Every test module under ``tests/integration`` is marked ``integration`` as a whole, so ``make unit``
(``-m "not integration"``) can leave the directory unimported (``tests/conftest.py``) and lose no test."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.conftest import UNIT_ONLY

INTEGRATION = Path(__file__).resolve().parents[2] / "integration"


def module_marks(source: str) -> list[str]:
    """The ``pytest.mark.<name>`` names of a module's ``pytestmark``."""
    for node in ast.parse(source).body:
        if isinstance(node, ast.Assign) and any(getattr(t, "id", None) == "pytestmark" for t in node.targets):
            return [n.attr for n in ast.walk(node.value)
                    if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Attribute) and n.value.attr == "mark"]
    return []


def test_every_integration_test_module_is_marked_integration_as_a_whole():
    modules = sorted(INTEGRATION.glob("test_*.py"))
    assert modules
    unmarked = [p.name for p in modules if "integration" not in module_marks(p.read_text(encoding="utf-8"))]
    assert unmarked == [], "mark these modules integration (pytestmark) or move them out of tests/integration"


def test_the_mark_reader_sees_a_mark_in_a_list_and_alone_and_none_elsewhere():
    assert module_marks("pytestmark = [pytest.mark.integration, pytest.mark.timeout(9)]") == ["integration",
                                                                                              "timeout"]
    assert module_marks("import pytest\npytestmark = pytest.mark.integration\n") == ["integration"]
    assert module_marks("def test_x():\n    pytestmark = pytest.mark.integration\n") == []
    assert module_marks("@pytest.mark.integration\ndef test_x(): pass\n") == []


def test_make_unit_selects_with_the_mark_expression_that_leaves_the_directory_out():
    unit = (INTEGRATION.parents[1] / "Makefile").read_text(encoding="utf-8").split("\nunit:", 1)[1].split("\n\n")[0]
    assert f'-m "{UNIT_ONLY}"' in unit
