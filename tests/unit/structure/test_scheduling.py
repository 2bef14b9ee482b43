"""`make test`'s scheduling rules (``tests/scheduling.py``), run by a pytest-xdist session of their own: tests
that share a module-scoped fixture run on one worker and the fixture runs once; tests that share none, and
modules that name their own group, keep their own placement; the listed modules are handed out first."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
ENV = {**os.environ, "PYTHONPATH": str(REPO)}  # the sessions import tests.scheduling

CONFTEST = '''
import pathlib, pytest
from tests import scheduling

@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config, items):
    root = pathlib.Path(__file__).resolve().parent
    scheduling.group_shared_module_fixtures(items, root=root)
    scheduling.longest_first(items, root=root, longest=["test_z_listed.py"])
'''

SHARED = '''
import json, os, pathlib, pytest

OUT = pathlib.Path(__file__).parent / "out"

def note(kind, name):
    OUT.mkdir(exist_ok=True)
    with open(OUT / f"{kind}.jsonl", "a") as fh:
        fh.write(json.dumps([name, os.environ["PYTEST_XDIST_WORKER"]]) + "\\n")

@pytest.fixture(scope="module")
def cluster():
    note("setups", "cluster")
    return "cluster"

@pytest.mark.parametrize("i", range(6))
def test_uses_the_module_fixture(cluster, i):
    note("tests", f"shared-{i}")

@pytest.mark.parametrize("i", range(6))
def test_uses_none(i):
    note("tests", f"free-{i}")
'''

LISTED = '''
def test_listed_first():
    pass
'''


def test_tests_sharing_a_module_fixture_run_on_one_worker_the_fixture_once_and_listed_modules_first(tmp_path: Path):
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "conftest.py").write_text(CONFTEST, encoding="utf-8")
    (tmp_path / "test_shared.py").write_text(SHARED, encoding="utf-8")
    (tmp_path / "test_z_listed.py").write_text(LISTED, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "3", "--dist", "loadgroup",
                          "--no-loadscope-reorder", "-v", "--rootdir", str(tmp_path), str(tmp_path)],
                         cwd=tmp_path, capture_output=True, text=True, timeout=300,
                         env=ENV)
    assert out.returncode == 0, out.stdout + out.stderr
    setups = [json.loads(line) for line in (tmp_path / "out" / "setups.jsonl").read_text().splitlines()]
    tests = dict(json.loads(line) for line in (tmp_path / "out" / "tests.jsonl").read_text().splitlines())
    assert len(setups) == 1, f"the module fixture ran more than once: {setups}"
    assert {tests[f"shared-{i}"] for i in range(6)} == {setups[0][1]}, tests
    assert len(tests) == 12
    # the group is in the test ids, as xdist reads it: <module>::<fixture>
    assert "test_shared.py::test_uses_the_module_fixture[0]@test_shared.py::cluster" in out.stdout, out.stdout
    assert "test_shared.py::test_uses_none[0] " in out.stdout, "a test that shares no fixture keeps no group"
    collected = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "--collect-only", "-q",
                                "--rootdir", str(tmp_path), str(tmp_path)], cwd=tmp_path, capture_output=True,
                               text=True, timeout=300, env=ENV)
    assert collected.stdout.splitlines()[0].endswith("test_z_listed.py::test_listed_first"), collected.stdout


APART_CONFTEST = '''
import pytest
from tests import scheduling

@pytest.hookimpl(tryfirst=True, optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    return scheduling.long_poles_apart(config, log)
'''

LONG_UNITS = '''
import os, pathlib, pytest
from tests.waiting import wait_for

HERE = pathlib.Path(__file__).parent

def ran(name):
    (HERE / f"{name}.worker").write_text(os.environ["PYTEST_XDIST_WORKER"])

@pytest.mark.xdist_group("a")
def test_a_first():
    ran("a0")

@pytest.mark.xdist_group("a")
def test_a_last_waits_for_c():
    ran("a1")
    # a stall guard: c runs at once unless it was queued behind this test
    wait_for("c, unless it was queued behind a's last test", lambda: (HERE / "c.worker").exists(), bool,
             step_seconds=60, poll=0.05)

@pytest.mark.xdist_group("b")
def test_b():
    ran("b")

@pytest.mark.xdist_group("c")
def test_c():
    ran("c")
'''

QUICK_UNITS = '''
import pytest

@pytest.mark.parametrize("i", range(6))
def test_quick(i):
    pass
'''


def test_a_long_unit_is_not_queued_behind_a_workers_last_long_test(tmp_path: Path):
    """Two workers: ``a`` and ``b`` start; plain ``loadgroup`` queues ``c`` behind ``a``'s last test, which
    waits for ``c``. Kept apart, ``a``'s worker gets quick tests and ``c`` runs once ``b`` is done."""
    (tmp_path / "pytest.ini").write_text("[pytest]\n", encoding="utf-8")
    (tmp_path / "conftest.py").write_text(APART_CONFTEST, encoding="utf-8")
    (tmp_path / "integration").mkdir()
    (tmp_path / "integration" / "test_long.py").write_text(LONG_UNITS, encoding="utf-8")
    (tmp_path / "unit").mkdir()
    (tmp_path / "unit" / "test_quick.py").write_text(QUICK_UNITS, encoding="utf-8")
    out = subprocess.run([sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-n", "2", "--dist", "loadgroup",
                          "--no-loadscope-reorder", "-q", "--rootdir", str(tmp_path), str(tmp_path / "integration"),
                          str(tmp_path / "unit")], cwd=tmp_path, capture_output=True, text=True, timeout=300, env=ENV)
    assert out.returncode == 0, out.stdout + out.stderr
    worker = {name: (tmp_path / "integration" / f"{name}.worker").read_text() for name in ("a0", "a1", "b", "c")}
    assert worker["a0"] == worker["a1"] != worker["c"] == worker["b"], worker


def test_only_integration_tests_count_as_long():
    from tests.scheduling import is_integration

    assert is_integration("tests/integration/test_demo.py::test_x[a::b]")
    assert not is_integration("tests/unit/report/test_items.py::test_integration_of_x")
