"""Only the simulated cluster's side imports the simulator: the real-cluster code (``cluster/``, ``preflight/``,
``plan/``, ``pipeline/``, ``evidence/`` ...) speaks the Kubernetes domain of ``gpupoc.kube``, which the
simulator speaks too. Imports are read with ``ast`` at any depth (functions, ``if TYPE_CHECKING:``), and a
module named by a string for ``importlib`` counts as imported."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from .parsed import SOURCES_GROUP, parsed
from .test_import_graph import PACKAGE, graph, imports, imports_in, module_name

pytestmark = pytest.mark.xdist_group(SOURCES_GROUP)


SIM = "gpupoc.sim"
# The modules outside gpupoc/sim/ that may import it, each with its reason. Keep this list short.
ALLOWED = {
    "gpupoc.cli": "the `gpupoc sim` sub-command: registers gpupoc.sim.cli by name, imported when run",
    "gpupoc.demo.services": "the demo's launcher: starts `gpupoc sim serve` and checks its fault and behaviour "
                            "profiles with the simulator's own parsers before anything starts",
}


def is_sim(name: str) -> bool:
    return name == SIM or name.startswith(SIM + ".")


def named_modules(text: str) -> set[str]:
    """Module paths the source names as whole strings (``importlib.import_module("gpupoc.sim.cli")``)."""
    return {n.value for n in ast.walk(parsed(text)) if isinstance(n, ast.Constant) and isinstance(n.value, str)
            and n.value.startswith("gpupoc.") and n.value.replace(".", "").replace("_", "").isalnum()}


def sim_imports(path: Path) -> set[str]:
    return {i for i in imports(path) | named_modules(path.read_text(encoding="utf-8")) if is_sim(i)}


def outside_sim() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")
            if "node_modules" not in p.parts and not is_sim(module_name(p))}


def test_only_the_sim_side_imports_the_simulator():
    bad = {m: sorted(sim_imports(p)) for m, p in sorted(outside_sim().items()) if m not in ALLOWED and sim_imports(p)}
    assert bad == {}, (f"modules outside gpupoc/sim/ import the simulator: {bad}; take the shared names from "
                       "gpupoc.kube (or move them there), or launch the simulator as `gpupoc sim` does")


def test_each_allowed_importer_still_imports_the_simulator():
    """A stale entry would let a new import in unseen: an allowed module that no longer needs it leaves the list."""
    mods = outside_sim()
    stale = sorted(m for m in ALLOWED if m not in mods or not sim_imports(mods[m]))
    assert stale == [], f"allowed to import gpupoc.sim but no longer do (drop them from ALLOWED): {stale}"


def test_no_real_cluster_module_reaches_the_simulator_through_others():
    g = graph()
    for start in ("gpupoc.cluster.manifests", "gpupoc.preflight.queue_match", "gpupoc.plan.cluster_setup",
                  "gpupoc.plan.files", "gpupoc.evidence.subject", "gpupoc.pipeline.k8s"):
        seen, todo = set(), [start]
        while todo:
            for nxt in g.get(todo.pop(), ()):
                if nxt not in seen:
                    seen.add(nxt)
                    todo.append(nxt)
        assert not {m for m in seen if is_sim(m)}, f"{start} reaches {sorted(m for m in seen if is_sim(m))}"


def test_an_import_inside_a_function_and_a_module_named_for_importlib_both_count():
    text = 'def f():\n    from gpupoc.sim.faults import parse_faults\nAREAS = {"sim": "gpupoc.sim.cli"}\n'
    assert "gpupoc.sim.faults.parse_faults" in imports_in(text, "gpupoc.plan")
    assert named_modules(text) == {"gpupoc.sim.cli"} and is_sim("gpupoc.sim") and not is_sim("gpupoc.simple")
