"""The REST client's run wait: a poll the busy API server answers too late is polled again, not a failure."""

from __future__ import annotations

import pytest

from gpupoc.airflow_runtime.client import AirflowClient
from gpupoc.exceptions import GpupocError, SourceUnavailable


def scripted(answers: list) -> AirflowClient:
    client = AirflowClient("http://127.0.0.1:1", "admin", "pw")

    def get_run(dag_id, run_id):
        answer = answers.pop(0) if len(answers) > 1 else answers[0]
        if isinstance(answer, Exception):
            raise answer
        return {"dag_run_id": run_id, "state": answer}

    client.get_run = get_run  # type: ignore[method-assign]
    return client


def test_a_timed_out_poll_is_polled_again_until_the_run_ends():
    late = SourceUnavailable("http://127.0.0.1:1/api/v2/dags/d/dagRuns/r", "timed out", "start Airflow")
    client = scripted(["running", late, late, "success"])
    assert client.wait_run("d", "r", timeout=60, poll=0)["state"] == "success"


def test_a_run_still_active_at_the_timeout_names_the_last_poll_error():
    late = SourceUnavailable("http://127.0.0.1:1/api/v2/dags/d/dagRuns/r", "timed out", "start Airflow")
    client = scripted([late])
    with pytest.raises(GpupocError, match=r"run d/r: still unread after 0 s; last poll: .*timed out"):
        client.wait_run("d", "r", timeout=0, poll=0)


@pytest.mark.parametrize("method, path", [("GET", "/api/v2/dags"), ("PATCH", "/api/v2/dags/poc_report"),
                                          ("DELETE", "/api/v2/dags/poc_report/assets/queuedEvents")])
def test_a_request_the_busy_server_did_not_answer_is_sent_again_and_a_trigger_is_not(monkeypatch, method, path):
    import gpupoc.airflow_runtime.client as mod

    client = AirflowClient("http://127.0.0.1:1", "admin", "pw")
    sent: list[str] = []

    def send(method, path, body=None, params=None, auth=True):
        sent.append(method)
        if len(sent) < 3:
            raise SourceUnavailable(path, "timed out", "start Airflow")
        return 200, {"ok": True}

    monkeypatch.setattr(client, "_send", send)
    monkeypatch.setattr(mod.time, "sleep", lambda s: None)
    assert client.request(method, path) == {"ok": True} and sent == [method] * 3
    sent.clear()
    with pytest.raises(SourceUnavailable):
        client.request("POST", "/api/v2/dags/d/dagRuns", {})
    assert sent == ["POST"], "a trigger is never sent twice"
