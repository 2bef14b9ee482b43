"""The workload program's ``load`` mode: ``load --target URL --rate R --duration D`` sends ``R`` GETs a second
for ``D`` seconds on a fixed schedule and writes one JSON line a second to stdout (and to ``--out``).

Each line: ``second``, ``ts`` (UTC, the end of the second on the schedule), ``target``, ``sent``, ``ok``,
``unready`` (503), ``unanswered``, ``availability_pct``, ``p50_ms``/``p95_ms``/``p99_ms`` (the client's
reading of the answered requests), and the generator's own lag (``workload/lag.py``): ``late_sent``,
``late_read``, ``distorted``, ``max_send_lag_ms``, ``server_p50_ms``/``server_p95_ms``/``server_p99_ms`` (the
replica's own time) and ``judged_p95_ms``/``judged_p99_ms`` (what the SLO judges), with ``lag_bound_ms``.

Requests leave on their schedule whatever the answers before them do: a slow or unanswered request never
holds back the next one (the omission a generator that waits would hide), and each request's slot is kept,
so a request the generator itself sent late is counted as such.
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import Future, ThreadPoolExecutor
from datetime import datetime, timezone
from typing import Callable, Sequence, TextIO

from gpupoc.workload.lag import DEFAULT_LAG_BOUND_MS, SERVE_MS_HEADER, Sample, second_row, serve_ms

Clock = Callable[[], float]


def request(url: str, timeout: float, due: float, clock: Clock = time.monotonic) -> Sample:
    """GET ``url`` once: its times and status (0 when nothing answered) and the replica's own time."""
    sent = clock()
    status, own = 0, None
    try:
        with urllib.request.urlopen(url, timeout=timeout) as resp:
            status, own = resp.status, serve_ms(resp.headers.get(SERVE_MS_HEADER))
            resp.read()
    except urllib.error.HTTPError as exc:
        status, own = exc.code, serve_ms(exc.headers.get(SERVE_MS_HEADER) if exc.headers else None)
    except (urllib.error.URLError, OSError, TimeoutError):
        status = 0
    return Sample(due=due, sent=sent, read=clock(), status=status, server_ms=own)


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="gpupoc-workload load")
    p.add_argument("--target", required=True, help="the URL to GET, e.g. http://svc:8080/v1/predict; $VAR and "
                   "${VAR} are replaced from the environment (a Service's {SVC}_SERVICE_HOST)")
    p.add_argument("--rate", type=float, default=5.0, help="requests per second")
    p.add_argument("--duration", type=float, default=10.0, help="seconds")
    p.add_argument("--timeout", type=float, default=2.0, help="seconds per request")
    p.add_argument("--lag-bound-ms", type=float, default=DEFAULT_LAG_BOUND_MS,
                   help="a request sent this much after its slot, or an answer read this much after the replica's "
                   f"own time, is the generator's lag (default {DEFAULT_LAG_BOUND_MS:g})")
    p.add_argument("--out", default=None, help="also write the JSON lines to this file")
    return p


def _write_rows(seconds: "queue.Queue[tuple[int, list[Future]] | None]", target: str, wall0: float,
                bound_ms: float, out: TextIO | None) -> None:
    """Each second's row once all its requests have ended, in order."""
    while (item := seconds.get()) is not None:
        second, futures = item
        ts = datetime.fromtimestamp(int(wall0 + second + 1), timezone.utc).isoformat(timespec="seconds")
        line = json.dumps({"second": second, "ts": ts, "target": target,
                           **second_row([f.result() for f in futures], bound_ms)})
        print(line, flush=True)
        if out:
            out.write(line + "\n")
            out.flush()


def load(argv: Sequence[str]) -> int:
    p = _parser()
    a = p.parse_args(argv)
    if a.rate <= 0 or a.duration <= 0 or a.lag_bound_ms <= 0:
        p.error("--rate, --duration and --lag-bound-ms must be positive")
    target = os.path.expandvars(a.target)
    if "$" in target:
        p.error(f"--target {target}: an environment variable it names is not set")
    per_second = max(1, int(a.rate))
    # enough threads that requests in flight (each up to a timeout per connect and per read) never queue
    workers = max(4, int(a.rate * (2 * a.timeout + 1)) + 2)
    seconds: queue.Queue = queue.Queue()
    out = open(a.out, "a", encoding="utf-8") if a.out else None
    start, wall0 = time.monotonic(), time.time()
    writer = threading.Thread(target=_write_rows, args=(seconds, target, wall0, a.lag_bound_ms, out), daemon=True)
    writer.start()
    try:
        with ThreadPoolExecutor(max_workers=workers) as pool:
            for second in range(int(a.duration)):
                futures = []
                for i in range(per_second):
                    due = start + second + i / a.rate
                    time.sleep(max(0.0, due - time.monotonic()))
                    futures.append(pool.submit(request, target, a.timeout, due))
                seconds.put((second, futures))
            seconds.put(None)
            writer.join()
    finally:
        if out:
            out.close()
    return 0
