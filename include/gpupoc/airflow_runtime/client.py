"""A small client of Airflow's REST API: token from ``/auth/token``, then ``/api/v2`` with a bearer token."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.parse
import urllib.request
from collections import Counter
from pathlib import Path
from typing import Callable

from gpupoc.airflow_runtime.settings import ADMIN_USER, STATE_FILE, admin_password
from gpupoc.common.processes import process_running
from gpupoc.exceptions import ApiError, ComponentExited, GpupocError, SourceUnavailable

TERMINAL_RUN_STATES = {"success", "failed"}


# Requests sent again when the busy server did not answer in time: sending one twice changes nothing (every
# PATCH this client sends sets fields: a pause, a pool's slots, a run's state). A POST (a trigger) never is.
RESENT_WHEN_UNANSWERED = frozenset({"GET", "PUT", "PATCH", "DELETE"})


class AirflowClient:
    """REST client bound to one deployment; the token is fetched lazily and renewed on a 401."""

    def __init__(self, url: str, username: str, password: str, timeout: float = 30.0):
        self.url = url.rstrip("/")
        self.username = username
        self.password = password
        self.timeout = timeout
        self._token: str | None = None

    @classmethod
    def for_home(cls, home: Path, url: str | None = None) -> "AirflowClient":
        """Client of the deployment under ``home`` (URL from its state file unless given)."""
        if url is None:
            try:
                url = json.loads((Path(home) / STATE_FILE).read_text(encoding="utf-8"))["url"]
            except (OSError, ValueError, KeyError):
                raise GpupocError(f"{home}: no running Airflow recorded ({STATE_FILE} missing); "
                                  "run `gpupoc airflow up`") from None
        return cls(url, ADMIN_USER, admin_password(Path(home)))

    # ---- transport ----
    def _send(self, method: str, path: str, body: object = None, params: dict | None = None,
              auth: bool = True) -> tuple[int, object]:
        url = self.url + path + (("?" + urllib.parse.urlencode(params, doseq=True)) if params else "")
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(url, data=data, method=method)
        req.add_header("Accept", "application/json")
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if auth:
            req.add_header("Authorization", f"Bearer {self.token()}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                raw = resp.read()
                return resp.status, (json.loads(raw) if raw else None)
        except urllib.error.HTTPError as exc:
            raw = exc.read()
            try:
                payload: object = json.loads(raw)
            except ValueError:
                payload = raw.decode(errors="replace")
            return exc.code, payload
        except (urllib.error.URLError, ConnectionError, TimeoutError, OSError) as exc:
            raise SourceUnavailable(url, str(exc), "start Airflow with `gpupoc airflow up`") from exc

    def request(self, method: str, path: str, body: object = None, params: dict | None = None,
                attempts: int = 4) -> object:
        """JSON answer of ``method path``; ApiError (status and body kept) unless 2xx.

        A 5xx is retried (SQLite answers "database is locked" under load as a 500), and so is a request the busy
        server did not answer in time, unless sending it twice could act twice (``RESENT_WHEN_UNANSWERED``); a
        401 renews the token.
        """
        for attempt in range(attempts):
            try:
                status, payload = self._send(method, path, body, params)
            except SourceUnavailable:
                if method not in RESENT_WHEN_UNANSWERED or attempt == attempts - 1:
                    raise
                time.sleep(1.0 + attempt)
                continue
            if status == 401:
                self._token = None
                status, payload = self._send(method, path, body, params)
            if status < 500 or attempt == attempts - 1:
                break
            time.sleep(1.0 + attempt)
        if not 200 <= status < 300:
            body_ = payload if isinstance(payload, dict) else {"message": payload}
            if "message" not in body_ and "detail" in body_:
                body_ = {**body_, "message": body_["detail"]}
            raise ApiError(status, body_, f"{method} {path}")
        return payload

    def token(self) -> str:
        if self._token is None:
            status, payload = self._send("POST", "/auth/token",
                                         {"username": self.username, "password": self.password}, auth=False)
            if status not in (200, 201) or not isinstance(payload, dict) or "access_token" not in payload:
                raise ApiError(status, payload if isinstance(payload, dict) else {"message": payload},
                               "POST /auth/token")
            self._token = payload["access_token"]
        return self._token

    # ---- health ----
    def health(self) -> dict:
        status, payload = self._send("GET", "/api/v2/monitor/health", auth=False)
        if status != 200 or not isinstance(payload, dict):
            raise ApiError(status, {"message": payload}, "GET /api/v2/monitor/health")
        return payload

    def warm_execution_api(self) -> int:
        """Ask the Task Execution API once (its health): the api-server builds that API's versioned routes on
        their first request (some 3 s on 2 cores), which would otherwise fall on the first task of the first
        run. The answer's status (0: none)."""
        try:
            return self._send("GET", "/execution/health", auth=False)[0]
        except SourceUnavailable:
            return 0

    def wait_ready(self, timeout: float = 180.0, pids: dict[str, int] | None = None) -> None:
        """Until the API answers its health endpoint (then the task execution API is warmed); fail early when a
        started process died."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            _check_pids(pids)
            try:
                self.health()
                self.warm_execution_api()
                return
            except (SourceUnavailable, ApiError) as exc:
                last = str(exc)
            time.sleep(0.5)
        raise SourceUnavailable(self.url, f"API not ready after {timeout:.0f} s ({last})",
                                "see the component logs under $AIRFLOW_HOME/logs/*.out")

    def wait_healthy(self, components: list[str], timeout: float = 180.0) -> dict:
        """Until every named component (scheduler, triggerer, dag-processor) reports healthy."""
        keys = [c.replace("-", "_") for c in components]
        deadline = time.monotonic() + timeout
        health: dict = {}
        while time.monotonic() < deadline:
            try:
                health = self.health()
            except (SourceUnavailable, ApiError):
                health = {}
            if all((health.get(k) or {}).get("status") == "healthy" for k in keys):
                return health
            time.sleep(1.0)
        raise SourceUnavailable(self.url, f"components not healthy after {timeout:.0f} s: {health}",
                                "see $AIRFLOW_HOME/logs/<component>.out")

    # ---- pools, DAGs, runs ----
    def ensure_pool(self, name: str, slots: int, description: str = "", include_deferred: bool = True) -> dict:
        body = {"name": name, "slots": slots, "description": description, "include_deferred": include_deferred}
        try:
            self.request("GET", f"/api/v2/pools/{name}")
        except ApiError as exc:
            if exc.status != 404:
                raise
            return self.request("POST", "/api/v2/pools", body)  # type: ignore[return-value]
        return self.request("PATCH", f"/api/v2/pools/{name}", body)  # type: ignore[return-value]

    def import_errors(self) -> list[dict]:
        payload = self.request("GET", "/api/v2/importErrors", params={"limit": 100})
        return list(payload.get("import_errors", [])) if isinstance(payload, dict) else []

    def wait_dag(self, dag_id: str, timeout: float = 120.0) -> dict:
        """Until the dag-processor has registered ``dag_id``; an import error of the DAG file fails at once."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                return self.request("GET", f"/api/v2/dags/{dag_id}")  # type: ignore[return-value]
            except ApiError as exc:
                if exc.status != 404:
                    raise
            errors = [e for e in self.import_errors() if dag_id in json.dumps(e) or "dags/" in e.get("filename", "")]
            if errors:
                raise GpupocError(f"DAG {dag_id} not loaded: import error in {errors[0].get('filename')}:\n"
                                  f"{errors[0].get('stack_trace', '')[-2000:]}")
            time.sleep(1.0)
        raise GpupocError(f"DAG {dag_id}: not registered after {timeout:.0f} s; check the dags folder "
                          "and $AIRFLOW_HOME/logs/dag-processor.out")

    def unpause(self, dag_id: str) -> dict:
        return self.request("PATCH", f"/api/v2/dags/{dag_id}", {"is_paused": False},  # type: ignore[return-value]
                            params={"update_mask": "is_paused"})

    def trigger(self, dag_id: str, conf: dict | None = None, run_id: str | None = None) -> dict:
        """A new manual run now (``logical_date`` null, as Airflow 3 requires for a run without a date)."""
        body: dict = {"logical_date": None, "conf": conf or {}}
        if run_id:
            body["dag_run_id"] = run_id
        return self.request("POST", f"/api/v2/dags/{dag_id}/dagRuns", body)  # type: ignore[return-value]

    def get_run(self, dag_id: str, run_id: str) -> dict:
        return self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns/{urllib.parse.quote(run_id)}")  # type: ignore

    def latest_run(self, dag_id: str, timeout: float = 0.0) -> dict | None:
        """The newest run of ``dag_id`` (scheduled or manual); waits up to ``timeout`` for one to appear."""
        deadline = time.monotonic() + timeout
        while True:
            page = self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns",
                                params={"order_by": "-run_after", "limit": 1})
            runs = page.get("dag_runs", []) if isinstance(page, dict) else []
            if runs or time.monotonic() >= deadline:
                return runs[0] if runs else None
            time.sleep(2.0)

    def task_instances(self, dag_id: str, run_id: str) -> list[dict]:
        """Every task instance of the run, mapped ones included (all pages)."""
        out: list[dict] = []
        offset = 0
        while True:
            page = self.request("GET", f"/api/v2/dags/{dag_id}/dagRuns/{urllib.parse.quote(run_id)}/taskInstances",
                                params={"limit": 100, "offset": offset})
            items = page.get("task_instances", []) if isinstance(page, dict) else []
            out.extend(items)
            offset += len(items)
            if not items or offset >= int(page.get("total_entries", 0)):
                return out

    def wait_run(self, dag_id: str, run_id: str, timeout: float = 1800.0, poll: float = 3.0,
                 on_progress: Callable[[dict, Counter], None] | None = None) -> dict:
        """Until the run is terminal; ``on_progress(run, task state counts)`` after every poll."""
        deadline = time.monotonic() + timeout
        run: dict = {}
        while True:
            try:
                run = self.get_run(dag_id, run_id)
                if on_progress:
                    on_progress(run, Counter(str(ti.get("state")) for ti in self.task_instances(dag_id, run_id)))
            except SourceUnavailable as exc:  # a busy API server (SQLite under load) timed out: poll again
                run = {**run, "last_error": str(exc)}
            if run.get("state") in TERMINAL_RUN_STATES:
                return run
            if time.monotonic() > deadline:
                raise GpupocError(f"run {dag_id}/{run_id}: still {run.get('state') or 'unread'} after {timeout:.0f} s"
                                  f"{'; last poll: ' + run['last_error'] if run.get('last_error') else ''}; "
                                  "raise --timeout or inspect the run in the UI")
            time.sleep(poll)


def _check_pids(pids: dict[str, int] | None) -> None:
    if not pids:
        return
    # gone or a zombie: a component's title may read empty for a moment while it starts, so no command line test
    dead = [n for n, p in pids.items() if not process_running(p)]
    if dead:
        raise ComponentExited(dead)
