"""Headless Chromium driven over the DevTools protocol, for the browser tests.

``launch(profile)`` starts Chromium (network limited to loopback) and yields a :class:`Page`; the page keeps
a log of every request the browser sent (``Network.requestWillBeSent``) in ``page.requests``.
"""

from __future__ import annotations

import base64
import itertools
import json
import os
import re
import shutil
import signal
import subprocess
import time
import urllib.request
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pytest

from gpupoc.common.chromium import chromium_binary, headless_command
from gpupoc.exceptions import ToolMissing

from tests.waiting import first_truthy

REPO = Path(__file__).resolve().parents[2]
SCREENSHOTS = REPO / "var" / "screenshots"


class Page:
    """One Chromium tab over the DevTools protocol (websocket, JSON commands with ids)."""

    def __init__(self, ws_url: str):
        import websocket  # websocket-client, a dependency of the kubernetes client

        # no Origin header: Chromium refuses DevTools connections from other origins
        self.ws = websocket.create_connection(ws_url, timeout=10, suppress_origin=True)
        self.ids = itertools.count(1)
        self.requests: list[str] = []
        self.call("Page.enable")
        self.call("Runtime.enable")
        self.call("Network.enable")
        self.call("Emulation.setDeviceMetricsOverride", width=1280, height=900, deviceScaleFactor=1, mobile=False)

    def _event(self, msg: dict) -> None:
        if msg.get("method") == "Network.requestWillBeSent":
            self.requests.append(msg["params"]["request"]["url"])

    def call(self, method: str, timeout: float = 30.0, **params) -> dict:
        msg_id = next(self.ids)
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params}))
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self.ws.settimeout(max(0.1, deadline - time.monotonic()))
            msg = json.loads(self.ws.recv())
            if msg.get("id") == msg_id:
                if "error" in msg:
                    raise AssertionError(f"{method}: {msg['error']}")
                return msg.get("result", {})
            self._event(msg)
        raise TimeoutError(f"{method}: no answer in {timeout} s")

    def js(self, expression: str):
        res = self.call("Runtime.evaluate", expression=expression, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in res:
            raise AssertionError(f"{expression[:80]}: {res['exceptionDetails'].get('text')}")
        return res["result"].get("value")

    def wait(self, expression: str, what: str, timeout: float = 30.0):
        """The expression's first truthy value; ``timeout`` is a stall guard (``tests/waiting.py``)."""
        def value():
            try:  # a DOM node comes back as {}: report it as found
                return self.js(f"(() => {{ const v = ({expression}); return v && v.nodeType ? true : v; }})()")
            except AssertionError:
                return None

        try:
            return first_truthy(what, value, step_seconds=timeout, poll=0.25)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; page {self.js('location.href')}:\n"
                                 f"{(self.js('document.body && document.body.innerText') or '')[:1500]}") from None

    def goto(self, url: str) -> None:
        self.call("Page.navigate", url=url)
        self.wait("document.readyState === 'complete' && location.href !== 'about:blank'", f"load of {url}")

    def screenshot(self, path: Path) -> Path:
        data = self.call("Page.captureScreenshot", format="png", timeout=60)["data"]
        path.write_bytes(base64.b64decode(data))
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        shutil.copy2(path, SCREENSHOTS / path.name)
        return path

    def close(self) -> None:
        self.ws.close()


@contextmanager
def launch(profile: Path) -> Iterator[Page]:
    """Chromium with a fresh profile and no network but loopback; skips the test when it is not installed."""
    try:
        chromium_binary()
    except ToolMissing as exc:
        pytest.skip(str(exc))
    proc = subprocess.Popen(
        headless_command(profile, "--window-size=1280,900", "--remote-debugging-address=127.0.0.1",
                         "--remote-debugging-port=0", "about:blank"),
        stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        port = None
        deadline = time.monotonic() + 30
        while port is None and time.monotonic() < deadline:
            line = proc.stderr.readline()
            if not line and proc.poll() is not None:
                break
            m = re.search(r"DevTools listening on ws://127\.0\.0\.1:(\d+)/", line)
            port = int(m.group(1)) if m else None
        assert port, f"chromium did not start (exit {proc.poll()})"
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10) as resp:
            targets = [t for t in json.load(resp) if t.get("type") == "page"]
        page = Page(targets[0]["webSocketDebuggerUrl"])
        try:
            yield page
        finally:
            page.close()
    finally:
        try:
            os.killpg(proc.pid, signal.SIGTERM)
            proc.wait(timeout=10)
        except (ProcessLookupError, subprocess.TimeoutExpired):
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(timeout=10)
