"""The package's import graph, read with ``ast``: no cycles, Airflow only where Airflow code lives, and no
layer importing a higher one. Imports under ``if TYPE_CHECKING:`` count like any other: a module that names
another's type depends on it, so no circle may close through them either."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .parsed import SOURCES_GROUP, parsed

pytestmark = pytest.mark.xdist_group(SOURCES_GROUP)


PACKAGE = Path(__file__).resolve().parents[3] / "include" / "gpupoc"
# Layers from the top down: a module may import its own layer or lower ones only. docs/architecture.md draws
# the same list (test_docs.py holds them equal).
LAYERS = [
    {"demo", "cli"},
    {"airflow_runtime", "ui"},
    {"dags"},
    {"steps", "classes"},  # classes: one folder per test class (its definition, probes and collector)
    # cluster: manifests, kubeconfig; preflight: its checks; controlplane: a real control plane with KWOK nodes
    {"pipeline", "monitoring", "cluster", "preflight", "controlplane"},
    {"fidelity"},  # the simulated cluster measured against a real control plane, through a kubeconfig
    {"compare"},  # candidates' reports side by side
    {"report"},
    {"validation", "podspec"},
    {"plan"},
    {"history", "costing"},  # a plan's replay reads its job history; its prices are typed in costing
    {"evidence", "sim", "workload"},
    {"kube"},  # the Kubernetes domain both the simulated cluster and the real-cluster code speak
    {"common", "exceptions"},
]
# Each area's command-line module (``<area>/cli.py``, ``report/bundle_cli.py``) registers its sub-commands with
# ``gpupoc/cli.py`` and sits in the top layer with it: it may use any layer, and only the top layer uses it.
CLI_MODULE_SUFFIXES = (".cli", "_cli")
# Where Airflow may be imported: its DAG code, the local deployment, the UI plugin's pages, and the optional
# lookup of Airflow connections for the monitoring sources.
# A test class's tables (``classes/<class>/table.py``: its row models, standard library only) are the evidence
# writer's schemas: they sit in the evidence layer, beneath everything that writes or reads them.
CLASS_TABLE_LAYER = "evidence"
AIRFLOW_ALLOWED = ("dags/", "airflow_runtime/", "ui/", "monitoring/sources.py")


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imports(path: Path) -> set[str]:
    """Every module this file imports, at any depth (functions and ``if TYPE_CHECKING:`` blocks too)."""
    here = module_name(path)
    return imports_in(path.read_text(encoding="utf-8"), here if path.name == "__init__.py" else here.rsplit(".", 1)[0])


def imports_in(text: str, pkg: str) -> set[str]:
    """The modules that the source ``text`` of a module of package ``pkg`` imports."""
    out: set[str] = set()
    for node in ast.walk(parsed(text)):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(pkg.split(".")[: len(pkg.split(".")) - node.level + 1] + ([base] if base else []))
            names = {f"{base}.{a.name}" for a in node.names}
            out |= names
            if not names <= MODULES:  # ``from pkg import submodule`` depends on the submodule, not on pkg's face
                out.add(base)
    return out


MODULES = {module_name(p) for p in PACKAGE.rglob("*.py") if "node_modules" not in p.parts}


def graph() -> dict[str, set[str]]:
    files = {module_name(p): p for p in PACKAGE.rglob("*.py") if "node_modules" not in p.parts}
    return {m: {i for i in imports(p) if i in files and i != m} for m, p in files.items()}


def cycles(g: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    import sys

    sys.setrecursionlimit(10000)
    for v in sorted(g):
        if v not in index:
            visit(v)
    return out


def layer(module: str) -> int | None:
    if module.endswith(CLI_MODULE_SUFFIXES):
        return 0
    parts = module.split(".")
    if len(parts) == 4 and parts[1] == "classes" and parts[3] == "table":
        return layer(f"gpupoc.{CLASS_TABLE_LAYER}")
    top = module.split(".")[1] if "." in module else module
    return next((i for i, names in enumerate(LAYERS) if top in names), None)


def test_the_package_has_no_import_cycles():
    found = cycles(graph())
    assert found == [], "import cycles (each group imports itself through the others): " + "; ".join(
        " <-> ".join(c) for c in found)


def test_no_module_imports_a_higher_layer():
    g = graph()
    bad = sorted(f"{m} -> {i}" for m, deps in g.items() for i in deps
                 if layer(m) is not None and layer(i) is not None and layer(i) < layer(m))
    assert bad == [], f"imports that run upward (layers, top first: {LAYERS}): {bad}"


def test_airflow_is_imported_only_where_airflow_code_lives():
    bad = []
    for p in PACKAGE.rglob("*.py"):
        rel = p.relative_to(PACKAGE).as_posix()
        if rel.startswith(AIRFLOW_ALLOWED):
            continue
        if any(i == "airflow" or i.startswith("airflow.") for i in imports(p)):
            bad.append(rel)
    assert bad == [], f"Airflow imported outside {AIRFLOW_ALLOWED}: {sorted(bad)}"


def test_every_module_belongs_to_a_layer():
    tops = {m.split(".")[1] for m in graph() if "." in m}
    assert tops <= set().union(*LAYERS), f"packages without a layer: {sorted(tops - set().union(*LAYERS))}"


def test_no_private_name_is_imported_from_another_module():
    """A name with a leading underscore is its module's own business: shared helpers get a public name."""
    bad = []
    for p in PACKAGE.rglob("*.py"):
        if "node_modules" in p.parts:
            continue
        for node in ast.walk(parsed(p.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gpupoc"):
                bad += [f"{p.relative_to(PACKAGE)}: {node.module}.{a.name}" for a in node.names
                        if a.name.startswith("_") and not a.name.startswith("__")]
    assert bad == [], f"private names imported across modules: {bad}"


def test_the_cycle_finder_finds_a_cycle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]


def test_an_import_under_type_checking_is_an_edge():
    text = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from gpupoc.sim.store import Store\n"
    assert "gpupoc.sim.store" in imports_in(text, "gpupoc.sim")


def test_a_class_table_module_sits_in_the_evidence_layer_and_imports_no_package_module():
    assert layer("gpupoc.classes.queue_congestion.table") == layer("gpupoc.evidence")
    assert layer("gpupoc.classes.queue_congestion.collector") == layer("gpupoc.steps")
    tables = sorted(PACKAGE.glob("classes/*/table.py"))
    assert tables, "no class table module found"
    for p in tables:
        mine = {i for i in imports(p) if i.startswith("gpupoc")}
        assert mine == set(), f"{p.relative_to(PACKAGE)} imports {sorted(mine)}: a class's row models use only the standard library"


def test_an_area_command_line_module_sits_in_the_top_layer():
    assert layer("gpupoc.history.cli") == layer("gpupoc.cli") == 0
    assert layer("gpupoc.report.bundle_cli") == 0 and layer("gpupoc.history.replay") == layer("gpupoc.plan") + 1
