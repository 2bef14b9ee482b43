"""monitoring/sources: explicit > Airflow connection > plan > local stack.json."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from types import SimpleNamespace

import pytest

from gpupoc.exceptions import SourceUnavailable
from gpupoc.monitoring import sources


def _conn(host, port=None, schema="", conn_type="http", login=None, password=None, extra=None):
    return SimpleNamespace(host=host, port=port, schema=schema, conn_type=conn_type, login=login, password=password,
                           extra_dejson=extra or {})


@pytest.fixture
def stack_dir(tmp_path):
    (tmp_path / "stack.json").write_text(json.dumps({
        "prometheus": {"url": "http://127.0.0.1:9001", "pid": 1},
        "alertmanager": {"url": "http://127.0.0.1:9002", "pid": 2},
        "receiver": {"url": "http://127.0.0.1:9003", "record": str(tmp_path / "alerts.jsonl")}}))
    return tmp_path


def test_local_stack_is_the_fallback(stack_dir, monkeypatch):
    monkeypatch.setattr(sources, "airflow_connection", lambda cid: None)
    s = sources.resolve_sources(stack_dir=stack_dir)
    assert s.prometheus == "http://127.0.0.1:9001" and s.alertmanager == "http://127.0.0.1:9002"
    assert s.receiver_record == str(stack_dir / "alerts.jsonl")
    assert s.origin["prometheus"].endswith("stack.json")


def test_plan_beats_stack_and_airflow_beats_plan(stack_dir, monkeypatch):
    conns = {"gpupoc_prometheus": _conn("prom.corp", 443, schema="https", password="tok")}
    monkeypatch.setattr(sources, "airflow_connection", conns.get)
    plan = {"prometheus_url": "http://plan-prom:9090", "alertmanager": "http://plan-am:9093",
            "audit_log": "/var/log/kube-apiserver/audit.log"}
    s = sources.resolve_sources(plan_sources=plan, stack_dir=stack_dir)
    assert s.prometheus == "https://prom.corp:443"
    assert s.prometheus_headers == {"Authorization": "Bearer tok"}
    assert s.origin["prometheus"] == "airflow connection gpupoc_prometheus"
    assert s.alertmanager == "http://plan-am:9093" and s.origin["alertmanager"] == "plan"
    assert s.audit_log == "/var/log/kube-apiserver/audit.log"


def test_plan_conn_id_names_the_airflow_connection(stack_dir, monkeypatch):
    conns = {"poc_prom": _conn("prom.poc", 9090)}
    monkeypatch.setattr(sources, "airflow_connection", conns.get)
    s = sources.resolve_sources(plan_sources={"prometheus_conn_id": "poc_prom",
                                              "alert_receiver_record": "/data/alerts.jsonl"}, stack_dir=stack_dir)
    assert s.prometheus == "http://prom.poc:9090" and s.origin["prometheus"] == "airflow connection poc_prom"
    assert s.receiver_record == "/data/alerts.jsonl" and s.origin["receiver_record"] == "plan"


def test_explicit_argument_wins(stack_dir, monkeypatch):
    monkeypatch.setattr(sources, "airflow_connection", lambda cid: _conn("airflow-prom", 9090))
    s = sources.resolve_sources(prometheus="http://explicit:9090", stack_dir=stack_dir)
    assert s.prometheus == "http://explicit:9090" and s.origin["prometheus"] == "argument"


def test_nothing_configured_raises_a_fix_on_use(monkeypatch, tmp_path):
    monkeypatch.setattr(sources, "airflow_connection", lambda cid: None)
    s = sources.resolve_sources(stack_dir=tmp_path)
    assert s.prometheus is None
    with pytest.raises(SourceUnavailable, match="gpupoc_prometheus"):
        s.prometheus_client()


@pytest.mark.parametrize("conn,url", [
    (_conn("http://prom:9090/"), "http://prom:9090"),
    (_conn("prom", 9090), "http://prom:9090"),
    (_conn("prom", 8443, conn_type="https"), "https://prom:8443"),
    (_conn("ignored", extra={"url": "https://thanos.corp/prometheus"}), "https://thanos.corp/prometheus"),
])
def test_connection_url_forms(conn, url):
    assert sources.connection_url(conn)[0] == url


def test_basic_auth_from_login_and_password():
    _, headers = sources.connection_url(_conn("prom", 9090, login="u", password="p"))
    assert headers == {"Authorization": "Basic dTpw"}


def test_real_airflow_connection_from_environment(tmp_path):
    pytest.importorskip("airflow")
    env = {**os.environ, "AIRFLOW_HOME": str(tmp_path),
           "AIRFLOW_CONN_GPUPOC_PROMETHEUS": "http://prom.example:9090"}
    code = ("from gpupoc.monitoring.sources import resolve_sources;"
            "s = resolve_sources(stack_dir=None); print(s.prometheus, s.alertmanager, s.origin['prometheus'])")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "http://prom.example:9090 None airflow connection gpupoc_prometheus"
