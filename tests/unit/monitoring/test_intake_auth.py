"""monitoring/intake_auth: a receiver's token and certificate are generated once and kept, the bearer check
names why a request is refused, listening beyond loopback needs both, and the refusal count keeps to a window
and knows whether the receiver required its token."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest

from gpupoc.common.pki import cert_hosts
from gpupoc.exceptions import ConfigError
from gpupoc.monitoring.intake_auth import (IntakeAuth, RefusalLog, bearer_refusal, check_bind, is_loopback, prepare,
                                           read_token, refused)

T0 = datetime(2026, 1, 5, 9, 0, tzinfo=timezone.utc)


def test_prepare_generates_a_private_token_and_a_ca_once_and_keeps_them(tmp_path):
    first = prepare(tmp_path, "127.0.0.1", "alert receiver")
    again = prepare(tmp_path, "127.0.0.1", "alert receiver")
    assert first.token and first.token == again.token and len(first.token) >= 32
    assert oct(first.token_file.stat().st_mode & 0o777) == "0o600"
    assert first.tls and oct(first.tls[1].stat().st_mode & 0o777) == "0o600", "the private key is private"
    assert first.ca_pem() == again.ca_pem(), "the CA stays, so configs that trust it stay valid"
    assert first.scheme == "https"


def test_a_new_host_reissues_the_certificate_from_the_same_ca(tmp_path):
    first = prepare(tmp_path, "127.0.0.1", "audit webhook")
    wide = prepare(tmp_path, "0.0.0.0", "audit webhook", hosts=("10.1.2.3", "runner.example"))
    assert {"10.1.2.3", "runner.example", "127.0.0.1"} <= cert_hosts(wide.tls[0])
    assert "0.0.0.0" not in cert_hosts(wide.tls[0]), "a wildcard listen address is no name to check"
    assert wide.ca_pem() == first.ca_pem()


def test_no_token_and_no_tls_are_for_loopback_only(tmp_path):
    plain = prepare(tmp_path, "127.0.0.1", "alert receiver", no_token=True, no_tls=True)
    assert (plain.token, plain.tls, plain.scheme) == (None, None, "http")
    with pytest.raises(ConfigError) as err:
        prepare(tmp_path, "0.0.0.0", "alert receiver", no_tls=True)
    assert err.value.source == "--host" and "no TLS" in str(err.value) and "--no-token/--no-tls" in str(err.value)


def test_conflicting_flags_are_named(tmp_path):
    tok = tmp_path / "t"
    tok.write_text("x")
    with pytest.raises(ConfigError, match="--token-file"):
        prepare(tmp_path, "127.0.0.1", "audit webhook", token_file=tok, no_token=True)


def test_an_empty_token_file_is_refused_with_the_fix(tmp_path):
    (tmp_path / "t").write_text("\n")
    with pytest.raises(ConfigError) as err:
        read_token(tmp_path / "t")
    assert err.value.source == "--token-file" and "empty" in str(err.value)


@pytest.mark.parametrize("host,loop", [("127.0.0.1", True), ("127.3.0.1", True), ("::1", True),
                                       ("localhost", True), ("0.0.0.0", False), ("10.0.0.5", False),
                                       ("runner.example", False)])
def test_is_loopback(host, loop):
    assert is_loopback(host) is loop


def test_check_bind_accepts_any_address_with_token_and_tls(tmp_path):
    check_bind("0.0.0.0", IntakeAuth(token="t", tls=(tmp_path / "c", tmp_path / "k")), "alert receiver")


@pytest.mark.parametrize("header,why", [(None, "no bearer token"), ("Basic dTpw", "no bearer token"),
                                        ("Bearer nope", "wrong bearer token"), ("Bearer s3cret", "")])
def test_bearer_refusal_names_why(header, why):
    assert bearer_refusal(header, "s3cret") == why
    assert bearer_refusal(header, None) == "", "no token configured: nothing to refuse"


def test_the_refusal_count_keeps_to_the_window_and_the_last_start(tmp_path):
    record = tmp_path / "alerts.jsonl"
    assert refused(record) is None, "a receiver that never ran keeps no count"
    log = RefusalLog(record)
    log.started(IntakeAuth(token="t"), at=T0)
    log.add("10.0.0.9", "/alerts", "no bearer token", at=T0 + timedelta(minutes=1))
    log.add("10.0.0.9", "/alerts", "wrong bearer token", at=T0 + timedelta(minutes=5))
    log.started(IntakeAuth(), at=T0 + timedelta(minutes=10))
    during = refused(record, T0, T0 + timedelta(minutes=2))
    assert (during.refused, during.authenticated) == (1, True)
    assert refused(record, T0, T0 + timedelta(minutes=6)).refused == 2
    later = refused(record, T0 + timedelta(minutes=11), T0 + timedelta(minutes=20))
    assert (later.refused, later.authenticated) == (0, False), "restarted without a token: it refused nothing"
