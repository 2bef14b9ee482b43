"""Headless Chromium (Debian's ``chromium``): where it is and the flags that keep it off the network.

Used to print the report to PDF and, in the tests, to open pages over the DevTools protocol.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

from gpupoc.exceptions import ToolMissing

CHROMIUM_ENV = "GPUPOC_CHROMIUM"
DEFAULT_BINARY = "/usr/bin/chromium"
INSTALL_FIX = "run `make test-deps` (bash scripts/install-browser.sh), or `apt-get install chromium`"
# No sign-in, sync, component or safe-browsing updates, field trials or first-run pages: nothing leaves the machine
# unless the page itself asks for it.
QUIET_FLAGS = ("--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
               "--no-default-browser-check", "--disable-background-networking", "--disable-component-update",
               "--disable-sync", "--disable-default-apps", "--disable-extensions", "--disable-domain-reliability",
               "--disable-client-side-phishing-detection", "--metrics-recording-only", "--disable-quic")
# Every host name resolves to nothing except loopback: a page that asks the internet for anything fails at once.
BLOCK_NETWORK = "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1"


def chromium_binary() -> Path:
    """The Chromium executable (``$GPUPOC_CHROMIUM``, /usr/bin/chromium, or ``chromium`` on PATH)."""
    configured = os.environ.get(CHROMIUM_ENV)
    if configured:
        path = Path(configured)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise ToolMissing(f"{CHROMIUM_ENV}={configured}: not an executable file",
                          f"point {CHROMIUM_ENV} at Chromium's binary or unset it; {INSTALL_FIX}")
    for candidate in (DEFAULT_BINARY, shutil.which("chromium"), shutil.which("chromium-browser")):
        if candidate and os.access(candidate, os.X_OK):
            return Path(candidate)
    raise ToolMissing(f"headless Chromium not found ({DEFAULT_BINARY} missing, no chromium on PATH)", INSTALL_FIX)


def headless_command(profile_dir: str | os.PathLike, *extra: str, block_network: bool = True) -> list[str]:
    """Chromium's command line with a fresh profile, the quiet flags and (by default) no network but loopback."""
    cmd = [str(chromium_binary()), *QUIET_FLAGS, f"--user-data-dir={profile_dir}"]
    if block_network:
        cmd.append(BLOCK_NETWORK)
    return cmd + list(extra)
