"""A whole `gpupoc demo --cluster kwok` in a private tree, for the end-to-end tests on the real control plane."""

from __future__ import annotations

import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path
from typing import Callable, Iterator

from gpupoc.demo.runner import DemoOptions, run_demo
from gpupoc.demo.services import DemoPaths, stop_everything
from gpupoc.pipeline.common import repo_root
from tests.integration.plans import small_demo_plan
from tests.integration.test_demo_options import processes_naming


@contextmanager
def kwok_demo(prefix: str, classes: tuple[str, ...], platform: str | None = None,
              plan: Callable[[Path], Path] = small_demo_plan) -> Iterator[tuple[object, list[str], Path]]:
    """(the demo's result, its console lines, the tree) of a demo on the plan ``plan(dest)`` writes (its
    ``platform`` when given), stopped (control plane included) and removed at the end; fails if anything of it
    is still running then."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    paths = DemoPaths(repo_root(), root / "var")
    lines: list[str] = []
    try:
        plan_file = plan(root / "plans" / "small.yaml")
        result = run_demo(DemoOptions(repo=repo_root(), plan=plan_file, port=0, var_dir=paths.var, timeout=1800,
                                      out=lines.append, classes=classes, cluster="kwok",
                                      **({"platform": platform} if platform else {})))
        print("\n".join(lines))
        yield result, lines, root
    finally:
        stop_everything(paths)
        left = processes_naming(str(root))
        shutil.rmtree(root, ignore_errors=True)
        assert not left, f"gpupoc down left running: {left}"
