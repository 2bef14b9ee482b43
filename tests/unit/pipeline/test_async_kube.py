"""The async client reads the environment's proxy once, as kubectl does, never on each request."""

from __future__ import annotations

import asyncio

import pytest

from gpupoc.pipeline.async_kube import read_environment_once


def _rest(proxy=None):
    from kubernetes_asyncio import client

    cfg = client.Configuration(host="https://api.example:6443")
    cfg.proxy = proxy

    async def build():
        return client.ApiClient(cfg)
    api = asyncio.run(build())
    return api, api.rest_client


@pytest.mark.parametrize("env,proxy,auth", [
    ({"HTTPS_PROXY": "http://user:pw@proxy.corp:3128"}, "http://proxy.corp:3128", True),
    ({"HTTPS_PROXY": "http://proxy.corp:3128", "NO_PROXY": "api.example"}, None, False),
    ({}, None, False),
])
def test_the_proxy_is_read_from_the_environment_once_and_the_session_trusts_it_no_more(monkeypatch, env, proxy, auth):
    for k in ("HTTPS_PROXY", "https_proxy", "NO_PROXY", "no_proxy", "HTTP_PROXY", "http_proxy"):
        monkeypatch.delenv(k, raising=False)
    for k, v in env.items():
        monkeypatch.setenv(k, v)
    api, rest = _rest()
    assert rest.pool_manager.trust_env, "kubernetes_asyncio's session reads the environment on every request"
    read_environment_once(rest, "https://api.example:6443")
    assert rest.proxy == proxy
    assert ("Proxy-Authorization" in (rest.proxy_headers or {})) is auth
    assert not rest.pool_manager.trust_env
    asyncio.run(api.close())


def test_a_proxy_the_configuration_names_is_kept(monkeypatch):
    monkeypatch.setenv("HTTPS_PROXY", "http://other:3128")
    api, rest = _rest(proxy="http://named:8080")
    read_environment_once(rest, "https://api.example:6443")
    assert rest.proxy == "http://named:8080" and not rest.pool_manager.trust_env
    asyncio.run(api.close())
