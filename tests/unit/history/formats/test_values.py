"""Cell parsers: what each accepts, and the message and fix of what it refuses."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.history.formats.values import (
    ValueProblem,
    offset_label,
    parse_count,
    parse_exit_code,
    parse_seconds,
    parse_time,
    parse_zone,
)


def test_counts_accept_whole_numbers_written_as_floats_and_empty_cells():
    assert parse_count("8") == 8 and parse_count("8.0") == 8 and parse_count(" ") is None


@pytest.mark.parametrize("text", ["eight", "-1", "2.5"])
def test_counts_refuse_what_is_not_a_whole_number_at_least_zero(text):
    with pytest.raises(ValueProblem, match=f"expected a whole number >= 0, got '{text}'"):
        parse_count(text)


@pytest.mark.parametrize("text, seconds", [("124", 124.0), ("10.5", 10.5), ("01:00:00", 3600.0),
                                           ("1-02:03:04", 93784.0), ("05:30", 330.0), ("00:00:01.5", 1.5)])
def test_seconds_accept_numbers_and_slurm_elapsed_times(text, seconds):
    assert parse_seconds(text) == seconds


def test_seconds_refuse_words_with_the_expected_forms():
    with pytest.raises(ValueProblem, match="expected seconds >= 0 or an elapsed time such as 1-02:03:04, got 'an hour'"):
        parse_seconds("an hour")


def test_slurm_exit_codes_take_the_code_or_128_plus_the_signal():
    assert parse_exit_code("3:0") == 3 and parse_exit_code("0:9") == 137 and parse_exit_code("0:0") == 0
    assert parse_exit_code("1") == 1 and parse_exit_code("") is None


def test_times_keep_their_offset_and_stay_naive_without_one():
    aware = parse_time("2023-03-01 00:18:22+08:00")
    assert aware.utcoffset() == timedelta(hours=8) and offset_label(aware) == "+08:00"
    assert parse_time("2024-03-01T10:00:00").tzinfo is None
    assert parse_time("1709287200") == datetime(2024, 3, 1, 10, 0, tzinfo=timezone.utc)
    assert parse_time("Unknown") is None and parse_time("None") is None


def test_a_time_that_is_no_time_names_the_expected_format():
    with pytest.raises(ValueProblem, match="expected an ISO 8601 time .* got 'yesterday'"):
        parse_time("yesterday")


def test_zones_are_iana_names_or_offsets_and_unknown_ones_are_config_errors():
    assert parse_zone("+05:30").utcoffset(None) == timedelta(hours=5, minutes=30)
    assert str(parse_zone("Asia/Shanghai")) == "Asia/Shanghai"
    with pytest.raises(ConfigError, match="--timezone: unknown time zone 'Mars/Olympus'"):
        parse_zone("Mars/Olympus")


@pytest.mark.parametrize("text", ["99999999999999999999", "2147483648", "9" * 400],
                         ids=["20-digits", "int32-max-plus-1", "400-digits"])
def test_counts_beyond_the_tables_int32_are_a_bad_cell_not_an_overflow(text):
    with pytest.raises(ValueProblem, match=f"count {text} is out of range \\(at most 2147483647\\)"):
        parse_count(text)


def test_counts_are_read_exactly_up_to_the_int32_limit():
    assert parse_count("2147483647") == 2**31 - 1 and parse_count("2147483647.0") == 2**31 - 1


@pytest.mark.parametrize("text", ["99999999999999999999", "0:99999999999999999999", "-99999999999999999999"])
def test_exit_codes_beyond_int32_are_a_bad_cell(text):
    with pytest.raises(ValueProblem, match="is out of range"):
        parse_exit_code(text)


@pytest.mark.parametrize("text", ["9" * 400, "1e400", "99999999999999999999", "9" * 400 + "-00:00:00",
                                  "99999999999999:00:00"],
                         ids=["400-digits", "exponent", "20-digits", "400-digit-days", "14-digit-hours"])
def test_seconds_beyond_any_representable_span_are_a_bad_cell(text):
    with pytest.raises(ValueProblem) as exc:
        parse_seconds(text)
    assert "out of range" in exc.value.message or "expected seconds >= 0" in exc.value.message


def test_seconds_refuse_negative_numbers():
    with pytest.raises(ValueProblem, match="expected seconds >= 0"):
        parse_seconds("-5")


@pytest.mark.parametrize("text", ["99999999999999999999", "-99999999999999999999", "9" * 400],
                         ids=["20-digits", "minus-20-digits", "400-digits"])
def test_unix_times_beyond_year_9999_are_a_bad_cell(text):
    with pytest.raises(ValueProblem, match=f"Unix time {text} is out of range"):
        parse_time(text)
