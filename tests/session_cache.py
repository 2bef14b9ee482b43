"""Test inputs that take long to build and never change within a test session: built once for the whole
session, whatever the number of pytest-xdist workers, and copied to each user.

A session-scoped fixture is per process: under ``make test`` each xdist worker built its own, and each
conftest its own (the report's and the comparison's fixtures validated the same synthetic evidence, GX and
its Data Docs, up to eight times a run, minutes each on a loaded machine). ``shared`` builds under a file
lock in a directory that every worker of this session shares and no other session does: the first worker to
ask builds, the others wait for it and reuse what it built. Callers copy what they may change.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from pathlib import Path
from typing import Callable

import pytest


def session_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """This session's directory common to all its workers: under xdist each worker's base temp directory is
    ``<session's>/popen-gwN``; without xdist the session's own."""
    base = tmp_path_factory.getbasetemp()
    return base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base


def shared(tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]) -> Path:
    """``<session dir>/shared-<name>``, filled by ``build(dir)`` once per session. A build that raised leaves
    nothing: the next caller builds again (and fails the same way, in its own test)."""
    root = session_dir(tmp_path_factory)
    done = root / f"shared-{name}"
    with open(root / f"shared-{name}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes, or when its process dies
        if not done.is_dir():
            building = root / f"shared-{name}.building"
            shutil.rmtree(building, ignore_errors=True)
            building.mkdir()
            build(building)
            building.rename(done)
    return done


def good_root(tmp_path_factory: pytest.TempPathFactory, name: str = "good") -> Path:
    """A copy of its own of a correct platform's validated synthetic evidence root
    (``gpupoc.validation.synthetic.write_good_root``: one validated run of every test class)."""
    from gpupoc.validation import synthetic as syn

    cached = shared(tmp_path_factory, "good-root", lambda d: syn.write_good_root(d / "evidence"))
    dest = tmp_path_factory.mktemp(name) / "evidence"
    shutil.copytree(cached / "evidence", dest)
    return dest
