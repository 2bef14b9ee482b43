"""The simulated API server's timestamps: now's text follows the wall clock's second."""

from __future__ import annotations

from datetime import datetime, timezone

from gpupoc.sim import clock


def test_now_text_follows_the_second(monkeypatch):
    seconds = iter([1_700_000_000.2, 1_700_000_000.9, 1_700_000_001.0])
    monkeypatch.setattr(clock.time, "time", lambda: next(seconds))
    first, same, later = clock.rfc3339(), clock.rfc3339(), clock.rfc3339()
    assert first == same == "2023-11-14T22:13:20Z"
    assert later == "2023-11-14T22:13:21Z"


def test_an_explicit_time_is_written_as_given():
    ts = datetime(2026, 11, 30, 7, 22, 56, 999_999, tzinfo=timezone.utc)
    assert clock.rfc3339(ts) == "2026-11-30T07:22:56Z"
    assert clock.parse(clock.rfc3339(ts)) == ts.replace(microsecond=0)
