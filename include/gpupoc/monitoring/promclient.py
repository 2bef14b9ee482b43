"""A small Prometheus HTTP API client (``/api/v1/query``, ``/api/v1/query_range``) with clear errors."""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.parse
import urllib.request
from datetime import datetime
from typing import Any

from gpupoc.exceptions import SourceUnavailable

MAX_POINTS = 10_000  # Prometheus refuses more than 11,000 points per series in one range query

_FIX = ("start it with `gpupoc stack up` (local stack) or set the Airflow connection gpupoc_prometheus / the "
        "plan's evidence source to a reachable Prometheus URL")


def _ts(t: datetime | float) -> float:
    return t.timestamp() if isinstance(t, datetime) else float(t)


class PrometheusClient:
    """Queries one Prometheus. Every failure raises :class:`SourceUnavailable` naming the URL and a fix."""

    def __init__(self, url: str, timeout: float = 10.0, headers: dict[str, str] | None = None):
        if not url or "://" not in url:
            raise SourceUnavailable(str(url), "not a URL (expected e.g. http://127.0.0.1:9090)", _FIX)
        self.url = url.rstrip("/")
        self.timeout = timeout
        self.headers = dict(headers or {})

    def __repr__(self) -> str:
        return f"PrometheusClient({self.url!r})"

    # -- raw API -------------------------------------------------------------------------------
    def _get(self, path: str, params: dict[str, Any]) -> dict:
        endpoint = f"{self.url}{path}"
        req = urllib.request.Request(f"{endpoint}?{urllib.parse.urlencode(params)}", headers=self.headers)
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                body = resp.read()
        except urllib.error.HTTPError as exc:
            body = exc.read()
            try:
                err = json.loads(body)
                reason = f"HTTP {exc.code} {err.get('errorType', '')}: {err.get('error', '')}"
            except ValueError:
                reason = f"HTTP {exc.code}: {body[:200]!r}"
            raise SourceUnavailable(endpoint, reason, "check the PromQL expression and the window") from exc
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            reason = getattr(exc, "reason", exc)
            raise SourceUnavailable(endpoint, f"unreachable: {reason}", _FIX) from exc
        try:
            doc = json.loads(body)
        except ValueError as exc:
            raise SourceUnavailable(endpoint, f"answer is not JSON: {body[:200]!r}",
                                    "point the URL at Prometheus itself, not a UI or proxy page") from exc
        if doc.get("status") != "success":
            raise SourceUnavailable(endpoint, f"{doc.get('errorType', 'error')}: {doc.get('error', doc)}",
                                    "check the PromQL expression")
        return doc["data"]

    def ready(self) -> bool:
        """True when ``/-/ready`` answers 200."""
        try:
            with urllib.request.urlopen(f"{self.url}/-/ready", timeout=self.timeout) as resp:
                return resp.status == 200
        except (urllib.error.URLError, OSError):
            return False

    def query(self, expr: str, time: datetime | float | None = None) -> list[dict]:
        """Instant query: ``[{"metric": {...}, "value": [ts, "v"]}]`` (vector) or a scalar as one item."""
        params: dict[str, Any] = {"query": expr}
        if time is not None:
            params["time"] = _ts(time)
        data = self._get("/api/v1/query", params)
        if data["resultType"] in ("scalar", "string"):
            return [{"metric": {}, "value": data["result"]}]
        return data["result"]

    def query_range(self, expr: str, start: datetime | float, end: datetime | float, step: float) -> list[dict]:
        """Range query, split into chunks of at most ``MAX_POINTS`` steps; series are merged by labels."""
        s, e = _ts(start), _ts(end)
        merged: dict[tuple, dict] = {}
        span = step * (MAX_POINTS - 1)
        chunk_start = s
        while chunk_start <= e:
            chunk_end = min(e, chunk_start + span)
            data = self._get("/api/v1/query_range",
                             {"query": expr, "start": chunk_start, "end": chunk_end, "step": step})
            for series in data["result"]:
                key = tuple(sorted(series["metric"].items()))
                merged.setdefault(key, {"metric": series["metric"], "values": []})["values"].extend(series["values"])
            chunk_start = chunk_end + step
            if math.isclose(chunk_end, e):
                break
        return list(merged.values())

    def series(self, match: str, start: datetime | float, end: datetime | float) -> list[dict]:
        """Label sets of the series matching ``match`` in the window (``/api/v1/series``)."""
        return self._get("/api/v1/series", {"match[]": match, "start": _ts(start), "end": _ts(end)})


def as_client(prom: "PrometheusClient | str") -> PrometheusClient:
    """Accept a client or a URL."""
    return prom if isinstance(prom, PrometheusClient) else PrometheusClient(prom)


def step_for(seconds: float, max_points: int = 2_000, minimum: float = 5.0) -> float:
    """A step that keeps a window of ``seconds`` under ``max_points`` samples a series."""
    return max(minimum, math.ceil(seconds / max_points))

