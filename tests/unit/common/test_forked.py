"""Work done by a forked child beside its parent: done, failed, or too slow and killed."""

from __future__ import annotations

import time

from gpupoc.common.forked import start_in_child


def test_a_child_s_work_is_done_and_reported_done(tmp_path):
    out = tmp_path / "saved.json"
    assert start_in_child(lambda: out.write_text("[]")).join(30)
    assert out.read_text() == "[]"


def test_a_child_whose_work_raised_is_reported_not_done(tmp_path):
    def fail() -> None:
        raise OSError("disk full")

    assert not start_in_child(fail).join(30)


def test_a_child_not_done_in_time_is_killed_and_reported_not_done(tmp_path):
    out = tmp_path / "late.json"

    def slow() -> None:
        time.sleep(60)
        out.write_text("[]")

    child = start_in_child(slow)
    assert not child.join(0.2)
    assert not out.exists()
