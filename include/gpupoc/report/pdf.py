"""``report.pdf``: the report's HTML printed by headless Chromium (Debian's ``chromium``), off the network.

The template's print stylesheet (``templates/report.print.css``) sets A4 pages, starts each section on a
new page and keeps charts and table rows whole. Chromium runs with a fresh profile, no header or footer,
none of its background network traffic, and no host name resolving but loopback.
"""

from __future__ import annotations

import os
import signal
import subprocess
import tempfile
from pathlib import Path

from gpupoc.common.chromium import headless_command
from gpupoc.exceptions import GpupocError

PDF_FILE = "report.pdf"
HTML_FILE = "report.html"
TIMEOUT_SECONDS = 120.0


class PrintFailed(GpupocError):
    """Chromium did not produce the PDF; keeps its exit code and the end of its output."""


def print_pdf(html: str | Path, out: str | Path, timeout: float = TIMEOUT_SECONDS) -> Path:
    """Print the HTML file ``html`` to the PDF file ``out``; return ``out``.

    Raises ToolMissing (naming the binary and ``make test-deps``) when Chromium is not installed, and
    PrintFailed when it exits without a PDF; an older ``out`` is removed first, so none is left that no
    longer matches the HTML.
    """
    src, dst = Path(html).resolve(), Path(out).resolve()
    if not src.is_file():
        raise GpupocError(f"{src}: no such HTML file to print; build the report first (gpupoc report RUN_DIR)")
    dst.parent.mkdir(parents=True, exist_ok=True)
    partial = dst.with_name(f".{dst.name}.partial")
    partial.unlink(missing_ok=True)
    dst.unlink(missing_ok=True)  # an older print would no longer match the HTML
    with tempfile.TemporaryDirectory(prefix="gpupoc-pdf-profile-") as profile:
        cmd = headless_command(profile, "--no-pdf-header-footer", f"--print-to-pdf={partial}", src.as_uri())
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                start_new_session=True)
        try:
            output, _ = proc.communicate(timeout=timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.communicate()
            partial.unlink(missing_ok=True)
            raise PrintFailed(f"{cmd[0]}: printing {src} took over {timeout:g} s; it was stopped") from None
    if proc.returncode != 0 or not partial.is_file() or partial.stat().st_size == 0:
        partial.unlink(missing_ok=True)
        tail = "\n".join(output.strip().splitlines()[-5:])
        raise PrintFailed(f"{cmd[0]} exited {proc.returncode} without writing {dst.name} from {src}:\n{tail}")
    partial.replace(dst)
    return dst


def print_report_pdf(report_dir: str | Path, timeout: float = TIMEOUT_SECONDS) -> Path:
    """``<report_dir>/report.pdf`` from ``<report_dir>/report.html`` (what ``build_report`` wrote)."""
    d = Path(report_dir)
    return print_pdf(d / HTML_FILE, d / PDF_FILE, timeout)
