"""Fixtures for the pipeline probes: a scripted stand-in for a Kubernetes API caller."""

from __future__ import annotations

import re
from typing import Any, Callable

import pytest

from gpupoc.pipeline.k8s import Response


def status(code: int, message: str, reason: str = "") -> Response:
    """A Kubernetes Status body as the API server sends it with an error."""
    return Response(code, {"kind": "Status", "apiVersion": "v1", "status": "Failure", "message": message,
                           "reason": reason or {403: "Forbidden", 404: "NotFound"}.get(code, ""), "code": code})


class FakeCaller:
    """Answers requests from routes (method, full-match path regex) -> Response or handler; records calls."""

    def __init__(self, context: str = "fake"):
        self.context = context
        self.endpoint = "http://127.0.0.1:1"
        self.calls: list[tuple[str, str, Any, Any]] = []
        self._routes: list[tuple[str, re.Pattern, Any]] = []

    def on(self, method: str, pattern: str, answer: Response | Callable[..., Response]) -> "FakeCaller":
        self._routes.append((method.upper(), re.compile(pattern), answer))
        return self

    def call(self, method: str, path: str, *, query=None, body=None, content_type=None, timeout=None) -> Response:
        self.calls.append((method.upper(), path, query, body))
        for m, rx, answer in reversed(self._routes):
            if m == method.upper() and rx.fullmatch(path):
                return answer(path, query, body) if callable(answer) else answer
        return status(404, f"no route for {method} {path}")


@pytest.fixture
def fake_caller() -> Callable[[str], FakeCaller]:
    return FakeCaller


@pytest.fixture
def k8s_status() -> Callable[..., Response]:
    return status
