"""Run the registered checks in order; an unreachable API stops the preflight there (one clear line)."""

from __future__ import annotations

import importlib
import logging
import time

from gpupoc.exceptions import GpupocError, SourceUnavailable
from gpupoc.preflight.context import PreflightContext
from gpupoc.preflight.model import CheckResult, PreflightReport, failed
from gpupoc.preflight.registry import CHECKS, Check

log = logging.getLogger(__name__)
# The modules whose checks run, in this order (the API first: nothing else answers without it).
CHECK_MODULES = (
    "gpupoc.preflight.api_checks",
    "gpupoc.preflight.identity_checks",
    "gpupoc.preflight.object_checks",
    "gpupoc.preflight.pool_checks",
    "gpupoc.preflight.image_checks",
    "gpupoc.preflight.audit_checks",
    "gpupoc.preflight.monitoring_checks",
    "gpupoc.preflight.airflow_checks",
)
API_CHECK = "api"


def registered() -> list[Check]:
    """Every check, those of ``CHECK_MODULES`` in its order (then any other module's, as registered)."""
    for name in CHECK_MODULES:
        importlib.import_module(name)
    rank = {name: i for i, name in enumerate(CHECK_MODULES)}
    return sorted(CHECKS, key=lambda c: rank.get(c.run.__module__, len(rank)))


def _run_one(c: Check, ctx: PreflightContext) -> list[CheckResult]:
    try:
        return c.run(ctx)
    except SourceUnavailable as exc:
        return [failed(c.id, "", f"{exc.endpoint}: {exc.reason}", exc.fix or "see the endpoint above")]
    except GpupocError as exc:
        return [failed(c.id, "", str(exc).splitlines()[0], "see the message")]
    except Exception as exc:  # noqa: BLE001 - a check never ends the preflight with a traceback
        log.exception("preflight check %s could not run", c.id)
        return [failed(c.id, "", f"the check could not run ({type(exc).__name__}: {exc})",
                       "rerun with --verbose and report the traceback")]


def run_preflight(ctx: PreflightContext) -> PreflightReport:
    """Every check (or a class's prerequisites when ``ctx.test_class`` is set), in registration order."""
    report = PreflightReport(ctx.plan.name, test_class=ctx.test_class or "")
    for c in registered():
        if ctx.test_class is not None and not c.prerequisite_of(ctx.test_class):
            continue
        t0 = time.perf_counter()
        results = _run_one(c, ctx)
        report.seconds[c.id] = time.perf_counter() - t0
        report.results += results
        if c.id == API_CHECK and any(r.failed for r in results):
            report.api_unreachable = True
            break  # nothing else can be told without the API
    return report
