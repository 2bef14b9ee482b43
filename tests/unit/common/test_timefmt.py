"""Times: RFC 3339 in, aware UTC inside, RFC 3339 with microseconds out."""

from __future__ import annotations

from datetime import datetime, timezone

import pytest

from gpupoc.common import timefmt as common


def test_kubernetes_timestamps_with_z_and_nanoseconds_parse_to_aware_utc():
    dt = common.parse_time("2026-03-02T09:00:01.123456789Z")
    assert dt == datetime(2026, 3, 2, 9, 0, 1, 123456, tzinfo=timezone.utc)
    assert common.parse_time("2026-03-02T09:00:01Z").tzinfo is not None
    assert common.parse_time("2026-03-02T11:00:01+02:00") == datetime(2026, 3, 2, 9, 0, 1, tzinfo=timezone.utc)
    assert common.parse_time(None) is None and common.parse_time("") is None


def test_rfc3339_round_trips_through_parse_time():
    dt = datetime(2026, 3, 2, 9, 0, 1, 5, tzinfo=timezone.utc)
    assert common.rfc3339(dt) == "2026-03-02T09:00:01.000005Z"
    assert common.parse_time(common.rfc3339(dt)) == dt


def test_other_iso_forms_parse_and_garbage_names_the_value():
    assert common.parse_time("2026-03-02") == datetime(2026, 3, 2, tzinfo=timezone.utc)
    assert common.parse_time("2026-03-02 09:00:01.5+0000") == datetime(2026, 3, 2, 9, 0, 1, 500000, tzinfo=timezone.utc)
    with pytest.raises(ValueError, match="'yesterday'"):
        common.parse_time("yesterday")


def test_rfc3339_of_nothing_is_empty_and_a_naive_time_counts_as_utc():
    assert common.rfc3339(None) == ""
    assert common.rfc3339(datetime(2026, 3, 2, 9)) == "2026-03-02T09:00:00.000000Z"
