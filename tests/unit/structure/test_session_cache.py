"""``tests/session_cache.py``: what one test session builds once is built once whatever its xdist workers, each
caller gets it, and another session builds its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]

TESTS = '''
import os, pathlib, time, pytest
from tests import session_cache

BUILDS = pathlib.Path(os.environ["BUILDS"])

def build(d):
    time.sleep(1)  # long enough for the other worker to ask while this one builds
    with open(BUILDS, "a") as fh:
        fh.write(os.environ.get("PYTEST_XDIST_WORKER", "main") + "\\n")
    (d / "value").write_text("built")

@pytest.mark.parametrize("i", range(4))
def test_reads_the_shared_input(tmp_path_factory, i):
    assert (session_cache.shared(tmp_path_factory, "input", build) / "value").read_text() == "built"
'''


def _session(tmp_path: Path, builds: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "-q", "--rootdir",
                           str(tmp_path), str(tmp_path)], cwd=tmp_path, capture_output=True, text=True, timeout=300,
                          env={**os.environ, "PYTHONPATH": str(REPO), "BUILDS": str(builds)})


def test_a_shared_input_is_built_once_per_session_for_every_worker(tmp_path: Path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "test_shared_input.py").write_text(TESTS, encoding="utf-8")
    builds = tmp_path / "builds.txt"
    first = _session(tmp_path, builds)
    assert first.returncode == 0, first.stdout + first.stderr
    assert len(builds.read_text().split()) == 1, f"built more than once in one session: {builds.read_text()}"
    second = _session(tmp_path, builds)
    assert second.returncode == 0, second.stdout + second.stderr
    assert len(builds.read_text().split()) == 2, "a new session builds its own"
