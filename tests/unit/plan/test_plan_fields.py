"""Constrained field types: each message names what is expected and, for URLs, the corrected value."""

from __future__ import annotations

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.plan import parse_plan


def errors_of(data: dict) -> list[str]:
    with pytest.raises(ConfigError) as info:
        parse_plan(data, "plan.yaml")
    return info.value.errors


@pytest.mark.parametrize("key", ["prometheus_url", "alertmanager_url"])
def test_a_url_without_its_scheme_is_refused_with_the_corrected_url(data, key):
    data["evidence_sources"][key] = "prom:9090"
    assert errors_of(data) == [f"evidence_sources.{key}: expected an http:// or https:// URL with its scheme, "
                               "such as 'http://prom:9090', got 'prom:9090'"]


@pytest.mark.parametrize("url, message", [
    ("ftp://prom:9090", "expected an http:// or https:// URL, not ftp://"),
    ("http://", "expected a host after the scheme, such as 'http://prometheus:9090'"),
    ("http://prom:99999", "expected a port from 1 to 65535 after the host, such as 'http://prometheus:9090'"),
    (9090, "expected an http:// or https:// URL such as 'http://prometheus:9090'"),
])
def test_a_url_needs_http_a_host_and_a_valid_port(data, url, message):
    data["evidence_sources"]["prometheus_url"] = url
    assert errors_of(data) == [f"evidence_sources.prometheus_url: {message}, got {url!r}"]


@pytest.mark.parametrize("url", ["http://prom:9090", "https://prometheus.monitoring.svc/prom", "http://[::1]:9093"])
def test_http_and_https_urls_are_kept_as_written(data, url):
    data["evidence_sources"]["alertmanager_url"] = url
    assert parse_plan(data).evidence_sources.alertmanager_url == url
