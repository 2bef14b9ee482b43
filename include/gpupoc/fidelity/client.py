"""A small HTTP client of one kubeconfig identity: every answer kept whole (status code and body), so the
scenario records what a client sees, refusals included."""

from __future__ import annotations

import base64
import json
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

import requests
import yaml

from gpupoc.exceptions import ConfigError

TIMEOUT = 30.0


@dataclass
class Answer:
    """One HTTP answer: its code and its JSON body (``{}`` when it had none or none that parses)."""

    code: int
    body: dict

    @property
    def ok(self) -> bool:
        return 200 <= self.code < 300


class Kube:
    """Requests as one identity (a bearer token or a client certificate) to one API server."""

    def __init__(self, server: str, verify: str | bool, token: str = "", cert: tuple[str, str] | None = None):
        self.server = server.rstrip("/")
        self.session = requests.Session()
        self.session.trust_env = False  # the kubeconfig's CA, never an environment bundle or proxy
        self.session.verify = verify
        if token:
            self.session.headers["Authorization"] = f"Bearer {token}"
        if cert:
            self.session.cert = cert
        self._verify = verify

    def as_token(self, token: str) -> "Kube":
        """The same server as another identity (a bearer token)."""
        return Kube(self.server, self._verify, token=token)

    def call(self, method: str, path: str, body: dict | None = None, params: dict | None = None,
             content_type: str = "application/json") -> Answer:
        resp = self.session.request(method, self.server + path, params=params, timeout=TIMEOUT,
                                    data=None if body is None else json.dumps(body),
                                    headers={"Content-Type": content_type})
        try:
            data = resp.json()
        except ValueError:
            data = {"text": resp.text[:500]}
        return Answer(resp.status_code, data if isinstance(data, dict) else {"items": data})

    def get(self, path: str, **params) -> Answer:
        return self.call("GET", path, params=params or None)

    def post(self, path: str, body: dict) -> Answer:
        return self.call("POST", path, body)

    def watch(self, path: str, resource_version: str, seconds: int = 5, limit: int = 50,
              field_selector: str = "", stop: Callable[[dict], bool] | None = None) -> list[dict]:
        """The events of a watch from ``resource_version`` (at most ``limit``, over at most ``seconds``, up to
        the first event ``stop`` holds of)."""
        params = {"watch": "true", "resourceVersion": resource_version, "timeoutSeconds": str(seconds)}
        if field_selector:
            params["fieldSelector"] = field_selector
        events: list[dict] = []
        with self.session.get(self.server + path, params=params, stream=True, timeout=seconds + TIMEOUT) as resp:
            if resp.status_code != 200:
                return [{"type": "HTTP", "object": _json(resp.text) | {"code": resp.status_code}}]
            for line in resp.iter_lines():
                if line:
                    events.append(_json(line.decode()))
                    if stop is not None and stop(events[-1]):
                        break
                if len(events) >= limit:
                    break
        return events


def _json(text: str) -> dict:
    try:
        data = json.loads(text)
    except ValueError:
        return {"text": text[:500]}
    return data if isinstance(data, dict) else {"items": data}


def from_kubeconfig(path: Path, context: str | None = None, workdir: Path | None = None) -> Kube:
    """The client of a kubeconfig's context: server, CA (data or file) and a token or client certificate."""
    try:
        cfg = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
        name = context or cfg["current-context"]
        ctx = next(c["context"] for c in cfg["contexts"] if c["name"] == name)
        cluster = next(c["cluster"] for c in cfg["clusters"] if c["name"] == ctx["cluster"])
        user = next(u["user"] for u in cfg["users"] if u["name"] == ctx["user"])
    except (OSError, KeyError, StopIteration, TypeError, yaml.YAMLError) as exc:
        raise ConfigError(f"{path}: not a kubeconfig with context {context or 'current-context'} ({exc}); "
                          "fix: pass the cluster's admin kubeconfig") from None
    work = Path(workdir or tempfile.mkdtemp(prefix="gpupoc-fidelity-"))
    verify = _material(cluster, "certificate-authority", work / "ca.crt") or True
    cert = _material(user, "client-certificate", work / "client.crt")
    key = _material(user, "client-key", work / "client.key")
    return Kube(cluster["server"], verify, token=user.get("token", ""), cert=(cert, key) if cert and key else None)


def _material(section: dict, name: str, out: Path) -> str:
    if section.get(f"{name}-data"):
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_bytes(base64.b64decode(section[f"{name}-data"]))
        out.chmod(0o600)
        return str(out)
    return str(section.get(name) or "")
