"""`make test` runs side by side with ``--dist loadgroup``: the tests of one Airflow deployment share a module
fixture and must stay on one worker. This checks that the installed pytest and pytest-xdist honour
``xdist_group`` (a pytest release that changes node ids silently spreads a group over workers)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

GROUPED = '''
import os, pathlib, pytest
pytestmark = pytest.mark.xdist_group("one-deployment")

@pytest.mark.parametrize("i", range(6))
def test_grouped(i):
    out = pathlib.Path(__file__).parent / "workers"
    out.mkdir(exist_ok=True)
    (out / f"{i}.txt").write_text(os.environ["PYTEST_XDIST_WORKER"])
'''


def test_tests_of_one_group_run_on_one_worker(tmp_path: Path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_grouped.py").write_text(GROUPED, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "3", "--dist", "loadgroup",
                          "-q", "--rootdir", str(tmp_path), str(tmp_path)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr
    workers = {f.read_text() for f in (tmp_path / "workers").glob("*.txt")}
    assert len(list((tmp_path / "workers").glob("*.txt"))) == 6
    assert len(workers) == 1, f"one group ran on several workers: {sorted(workers)}"
