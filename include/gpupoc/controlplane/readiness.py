"""Waiting for each component: etcd's ``/health``, the API server's ``/readyz`` answering exactly ``ok`` (a
substring match passes before the bootstrap RBAC exists, and the controller manager then exits), the
controller manager's and scheduler's ``/healthz``, and the KWOK nodes Ready. A component that exits while
awaited fails at once with its log's tail."""

from __future__ import annotations

import json
import ssl
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Callable

from gpupoc.controlplane import processes
from gpupoc.controlplane.layout import Layout
from gpupoc.exceptions import GpupocError

START_TIMEOUT_SECONDS = 180.0  # a component that is neither ready nor exited by then is reported stuck


class ComponentNotReady(GpupocError):
    """A control-plane component exited or never became ready."""


def http_get(url: str, *, ca_file: Path | None = None, token: str | None = None, verify: bool = True,
             timeout: float = 5.0) -> tuple[int, str]:
    """(status, body) of a GET; (0, reason) when nothing answered."""
    ctx = None
    if url.startswith("https"):
        ctx = ssl.create_default_context(cafile=str(ca_file)) if verify and ca_file else ssl.create_default_context()
        if not verify:
            ctx.check_hostname, ctx.verify_mode = False, ssl.CERT_NONE
    req = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(req, timeout=timeout, context=ctx) as r:
            return r.status, r.read().decode(errors="replace")
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode(errors="replace")
    except (OSError, ssl.SSLError) as exc:
        return 0, str(getattr(exc, "reason", exc))


def wait_until(layout: Layout, name: str, pid: int | None, ready: Callable[[], tuple[bool, str]],
               timeout: float = START_TIMEOUT_SECONDS) -> float:
    """Poll ``ready()`` until it holds; seconds waited. Fails naming the component when its process exits."""
    t0 = time.monotonic()
    seen = "nothing yet"
    while True:
        ok, seen = ready()
        if ok:
            return time.monotonic() - t0
        if pid is not None and processes.exited(pid):
            raise ComponentNotReady(f"{name} exited while starting (last seen: {seen}); its log "
                                    f"{layout.log_file(name)} ends:\n{processes.log_tail(layout, name)}")
        if time.monotonic() - t0 > timeout:
            raise ComponentNotReady(f"{name} not ready after {timeout:.0f} s (last seen: {seen}); see "
                                    f"{layout.log_file(name)}")
        time.sleep(0.2)


def etcd_ready(port: int) -> Callable[[], tuple[bool, str]]:
    def probe() -> tuple[bool, str]:
        code, body = http_get(f"http://127.0.0.1:{port}/health")
        try:
            return code == 200 and json.loads(body).get("health") == "true", f"{code} {body[:80]}"
        except ValueError:
            return False, f"{code} {body[:80]}"
    return probe


def exactly_ok(url: str, *, ca_file: Path | None = None, token: str | None = None,
               verify: bool = True) -> Callable[[], tuple[bool, str]]:
    """Ready when ``url`` answers 200 with the body exactly ``ok``."""
    def probe() -> tuple[bool, str]:
        code, body = http_get(url, ca_file=ca_file, token=token, verify=verify)
        return code == 200 and body.strip() == "ok", f"{code} {body.strip()[-120:]}"
    return probe
