"""Run the expectation suites over one run's evidence with Great Expectations 1.x.

A file data context under ``<evidence_root>/gx`` keeps every run's results, so the Data Docs site at
``<evidence_root>/data_docs/local_site/index.html`` grows as runs accumulate. Tables the manifest marks not
verified are not validated: their checks are NOT_VERIFIED with the manifest's reason, never PASS. A conditional
check whose case never arose in a collected table is NOT_APPLICABLE with its reason (``validation.conditions``).
"""

from __future__ import annotations

import fcntl
import json
import logging
import os
import time
from contextlib import contextmanager
from datetime import datetime, timezone
from functools import cache
from pathlib import Path
from typing import Any, Callable, Iterator

import pandas as pd

from gpupoc.evidence.reader import RunEvidence
from gpupoc.evidence.writer import sha256_file, store_suite_parameters
from gpupoc.exceptions import ToolMissing, ValidationFailed
from gpupoc.validation.conditions import settle
from gpupoc.validation.derived import DERIVED
from gpupoc.validation.gx_costs import saved_once
from gpupoc.validation.gx_project import SITE, data_docs_index, keep, project_context
from gpupoc.validation.named_rows import name_rows
from gpupoc.validation.models import (CheckOutcome, FailureClass, SuiteOutcome, Tier, ValidationSummary,
                                      Verdict)
from gpupoc.validation.parameters import PARAMETERS_UNKNOWN, plan_suite
from gpupoc.validation.reasons import word
from gpupoc.validation.stored import SUMMARY_FILE
from gpupoc.validation.suites import DERIVED_PREFIX, SuiteFile, load_suites
from gpupoc.validation.unseen import resolved_mostly, settle_unseen

DERIVED_SOURCES = {"priority_order": ["workload_runs"], "tenant_share": ["workload_runs"]}
log = logging.getLogger(__name__)


@contextmanager
def _locked(path: Path) -> Iterator[None]:
    """One validation at a time per GX project (DAGs of different classes may finish together)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


Reason = tuple[str, dict[str, Any]]  # (reason code, its values): worded by gpupoc.validation.reasons


def _table_source(ev: RunEvidence, suite: SuiteFile) -> tuple[str | None, Reason]:
    """(path relative to the run dir, or None with the reason it is not verified)."""
    if suite.is_derived:
        name = suite.table[len(DERIVED_PREFIX):]
        if name not in DERIVED:
            return None, ("check.unknown_derived", {"name": name, "known": ", ".join(sorted(DERIVED))})
        for src in DERIVED_SOURCES.get(name, []):
            st = ev.status(src)
            if not st.verified:
                return None, ("check.source_not_verified", {"table": src, "why": {"code": st.code, "args": st.args}})
        rel = f"validation/derived/{name}.parquet"
        out = ev.run_dir / rel
        out.parent.mkdir(parents=True, exist_ok=True)
        DERIVED[name](ev).to_parquet(out, index=False)
        return rel, ("", {})
    st = ev.status(suite.table)
    if not st.verified:
        return None, (st.code, st.args)
    return str(st.path.relative_to(ev.run_dir)), ("", {})


def _outcome(exp_meta: dict[str, Any], suite: SuiteFile, etype: str, verdict: Verdict, reason: Reason,
             observed: dict[str, Any] | None = None) -> CheckOutcome:
    fc = exp_meta.get("failure_class") or FailureClass.PRODUCT_GAP.value
    code, args = reason
    return CheckOutcome(
        check_id=exp_meta.get("check_id", "?"), suite=suite.name, table=suite.table, expectation_type=etype,
        tier=Tier(exp_meta.get("tier", "must")), item=exp_meta.get("item", "?"), signal=exp_meta.get("signal", ""),
        verdict=verdict, optional=bool(exp_meta.get("optional")), reason=word(code, args), reason_code=code,
        reason_args=args, observed=observed or {},
        failure_class=FailureClass(fc) if verdict is Verdict.FAIL else None)


def _describe(res: dict[str, Any], prefix: str = "check.") -> Reason:
    """What GX observed, as a reason (``prefix`` "check.not_met_" for a failure)."""
    r = res.get("result") or {}
    if r.get("observed_value") is not None:  # GX observes no value for some (a distinct set that holds)
        return f"{prefix}observed", {"value": repr(r["observed_value"])}
    if "element_count" in r:
        n, bad = r.get("element_count", 0), r.get("unexpected_count", 0)
        sample = (r.get("partial_unexpected_list") or [])[:5]
        if bad:
            return f"{prefix}rows_sample", {"bad": bad, "n": n, "sample": repr(sample)}
        return f"{prefix}rows", {"bad": bad, "n": n}
    return (prefix.rstrip("_"), {}) if prefix != "check." else ("", {})


_TABLE_LEVEL = ("expect_table_", "expect_column_unique_value_count", "expect_column_distinct_",
                "expect_column_max_", "expect_column_min_", "expect_column_mean_", "expect_column_sum_")


def _check_from_result(res: dict[str, Any], suite: SuiteFile) -> CheckOutcome:
    cfg = res.get("expectation_config") or {}
    meta, etype = cfg.get("meta") or {}, cfg.get("type", "")
    r = res.get("result") or {}
    observed = {k: r[k] for k in ("observed_value", "element_count", "unexpected_count", "unexpected_percent",
                                  "missing_count", "partial_unexpected_list") if k in r}
    exc = res.get("exception_info") or {}
    if exc.get("raised_exception"):
        msg = str(exc.get("exception_message") or "")[:300]
        return _outcome(meta, suite, etype, Verdict.NOT_VERIFIED, ("check.exception", {"message": msg}), observed)
    if r.get("element_count") == 0 and not etype.startswith(_TABLE_LEVEL):
        return _outcome(meta, suite, etype, Verdict.NOT_VERIFIED, ("check.no_rows", {}), observed)
    if (r.get("element_count") and r.get("missing_count") == r.get("element_count")
            and "not_be_null" not in etype):
        return _outcome(meta, suite, etype, Verdict.NOT_VERIFIED,
                        ("check.no_values", {"column": cfg.get("kwargs", {}).get("column")}), observed)
    if res.get("success"):
        return _outcome(meta, suite, etype, Verdict.PASS, _describe(res), observed)
    return _outcome(meta, suite, etype, Verdict.FAIL, _describe(res, "check.not_met_"), observed)


def _settled(res: dict[str, Any], suite: SuiteFile, frame: Callable[[], pd.DataFrame],
             params: dict[str, Any], table: Callable[[str], pd.DataFrame] | None = None) -> CheckOutcome:
    """GX's outcome of one expectation, settled for a case that never arose and for rows nobody saw; a failure
    names the pods of its rows (``named_rows``)."""
    cfg = res.get("expectation_config") or {}
    meta = cfg.get("meta") or {}
    check = settle(_check_from_result(res, suite), meta, frame, table)
    check = settle_unseen(check, meta, frame, resolved_mostly(cfg.get("kwargs") or {}, params))
    return name_rows(check, cfg.get("kwargs") or {}, frame)


def _case_tables(ev: RunEvidence, summary: ValidationSummary) -> Callable[[str], pd.DataFrame]:
    """The run's tables a conditional check may read to tell whether its case arose, each read once and sealed
    with the inputs; empty when not collected or changed (the case cannot be told, so nothing is settled)."""
    @cache
    def load(name: str) -> pd.DataFrame:
        st = ev.status(name)
        if not st.verified:
            return pd.DataFrame()
        summary.inputs[str(st.path.relative_to(ev.run_dir))] = sha256_file(st.path)
        return ev.load(name)
    return load


def _write_json(path: Path, data: Any) -> str:
    """Write ``data`` as JSON atomically; return the file's sha256."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(json.dumps(data, indent=1, sort_keys=True, default=str), encoding="utf-8")
    tmp.replace(path)
    return sha256_file(path)


def _run_time(ev: RunEvidence) -> datetime:
    """A fixed time per run (the window end), so a rerun overwrites the same Data Docs page."""
    end = ev.window.get("end")
    try:
        dt = datetime.fromisoformat(str(end).replace("Z", "+00:00")) if end else None
    except ValueError:
        dt = None
    if dt is None:
        dt = datetime.fromtimestamp((ev.run_dir / "manifest.json").stat().st_mtime, tz=timezone.utc)
    return dt if dt.tzinfo else dt.replace(tzinfo=timezone.utc)


def _parameters(run_dir: str | Path, given: dict[str, Any] | None) -> RunEvidence:
    """The run's evidence, with ``given`` parameters stored in it first (over those it stored)."""
    ev = RunEvidence.open(run_dir)
    if given is not None:
        store_suite_parameters(ev.run_dir, {**(ev.suite_parameters or {}), **given})
        ev = RunEvidence.open(run_dir)
    return ev


def _held(s: SuiteFile, held: list[tuple[dict[str, Any], list[str]]]) -> list[CheckOutcome]:
    """The checks whose parameters the run's evidence cannot tell: NOT_VERIFIED, naming them."""
    return [_outcome(e.get("meta") or {}, s, e.get("type", ""), Verdict.NOT_VERIFIED,
                     (PARAMETERS_UNKNOWN, {"names": ", ".join(names)})) for e, names in held]


def validate_run(run_dir: str | Path, suites_dir: str | Path | None = None, docs_dir: str | Path | None = None,
                 parameters: dict[str, Any] | None = None) -> ValidationSummary:
    """Validate every suite that applies to the run's test class; store results with the evidence.

    The suites' parameters (thresholds and ``requires`` flags, overriding the suites' defaults by name) are
    the ones stored with the run (``validation.parameters``); ``parameters``, when given (the class DAG's
    validate task), are stored with the run first, over those it stored, and then read back the same way.
    Results go to ``<run_dir>/validation/<suite>.json`` and ``summary.json``; nothing raises on a failed check.
    The summary keeps the sha256 of every table it validated and of every result it wrote, the plan hash and
    the parameters, so the report can tell evidence changed after validation; its paths are relative to the
    evidence root.
    """
    ev = _parameters(run_dir, parameters)
    known = ev.suite_parameters
    docs = Path(docs_dir) if docs_dir else ev.evidence_root
    suites = [s for s in load_suites(suites_dir) if s.applies_to(ev.test_class)]
    vdir = ev.run_dir / "validation"
    summary = ValidationSummary(run_dir=ev.rel_dir, dag_id=ev.dag_id, run_id=ev.run_id,
                                test_class=ev.test_class, plan_hash=ev.plan_hash, parameters=known)
    runnable: list[tuple[SuiteFile, str, dict[str, Any], list[CheckOutcome]]] = []
    for whole in suites:
        sp = plan_suite(whole, known)
        if sp.empty:
            continue  # every check of the suite needs a case the plan does not provoke (``requires``)
        s, params, held = sp.suite, sp.params, _held(whole, sp.held)
        rel, reason = _table_source(ev, s) if s.expectations(params) else (None, (PARAMETERS_UNKNOWN, {
            "names": ", ".join(dict.fromkeys(n for _, names in sp.held for n in names))}))
        if rel is None:
            checks = [_outcome(e.get("meta") or {}, s, e.get("type", ""), Verdict.NOT_VERIFIED, reason)
                      for e in s.expectations(params)] + held
            text = word(*reason)
            summary.results[f"validation/{s.name}.json"] = _write_json(
                vdir / f"{s.name}.json", {"suite": s.name, "verified": False, "reason": text, "success": None})
            summary.suites.append(SuiteOutcome(suite=s.name, table=s.table, verified=False, reason=text,
                                               result_path=f"{ev.rel_dir}/validation/{s.name}.json", checks=checks))
        else:
            runnable.append((s, rel, params, held))
            summary.inputs[rel] = sha256_file(ev.run_dir / rel)
    if runnable:
        t0 = time.perf_counter()
        results = _run_gx(ev, docs, [(s, rel, params) for s, rel, params, _ in runnable])
        summary.gx_seconds = round(time.perf_counter() - t0, 3)
        case_tables = _case_tables(ev, summary)
        for s, rel, params, held in runnable:
            res = results[s.name]
            summary.results[f"validation/{s.name}.json"] = _write_json(vdir / f"{s.name}.json", res)
            frame = cache(lambda path=ev.run_dir / rel: pd.read_parquet(path))
            checks = [_settled(r, s, frame, params, case_tables) for r in res.get("results", [])] + held
            summary.suites.append(SuiteOutcome(suite=s.name, table=s.table, verified=True,
                                               result_path=f"{ev.rel_dir}/validation/{s.name}.json", checks=checks))
        summary.data_docs_index = os.path.relpath(data_docs_index(docs), ev.evidence_root)
    summary.suites.sort(key=lambda so: so.suite)
    for c in summary.checks:
        c.test_class = ev.test_class
    _write_json(vdir / SUMMARY_FILE, summary.model_dump(mode="json"))
    return summary


def unvalidated_summary(ev: RunEvidence, suites: list[SuiteFile], code: str, args: dict[str, Any]) -> ValidationSummary:
    """The summary a run would have if nothing could be checked: every check of its suites NOT_VERIFIED with
    the reason ``code`` (for a run the report finds without a usable validation). Its checks are those its
    stored parameters make apply, and every check whose parameters they cannot tell."""
    known = ev.suite_parameters
    summary = ValidationSummary(run_dir=ev.rel_dir, dag_id=ev.dag_id, run_id=ev.run_id, test_class=ev.test_class,
                                plan_hash=ev.plan_hash, parameters=known)
    for s in suites:
        if s.applies_to(ev.test_class):
            sp = plan_suite(s, known)
            checks = [_outcome(e.get("meta") or {}, s, e.get("type", ""), Verdict.NOT_VERIFIED, (code, args))
                      for e in sp.suite.expectations(sp.params) + [e for e, _ in sp.held]]
            summary.suites.append(SuiteOutcome(suite=s.name, table=s.table, verified=False, reason=word(code, args),
                                               result_path="", checks=checks))
    for c in summary.checks:
        c.test_class = ev.test_class
    return summary


def _run_gx(ev: RunEvidence, docs: Path, runnable: list[tuple[SuiteFile, str, dict[str, Any]]]) -> dict[str, Any]:
    """One checkpoint per run: a parquet asset per table, a validation definition per suite."""
    with _locked(docs / "gx" / ".validation.lock"):
        ctx = project_context(docs)  # first: it keeps GX's analytics off before GX is imported
        import great_expectations as gx
        from great_expectations.core.run_identifier import RunIdentifier

        with saved_once(ctx):
            cp, params_all = _checkpoint(gx, ctx, ev, runnable)
        run_id = RunIdentifier(run_name=f"{ev.dag_id}__{ev.run_id}", run_time=_run_time(ev))
        result = cp.run(expectation_parameters=params_all, run_id=run_id)
        _update_data_docs(ctx, result)
        keep(docs, ctx)
        _offline_site(docs)
        out = {}
        for vr in result.run_results.values():
            d = vr.to_json_dict()
            out[d["suite_name"]] = d
        return out


def _checkpoint(gx: Any, ctx: Any, ev: RunEvidence,
                runnable: list[tuple[SuiteFile, str, dict[str, Any]]]) -> tuple[Any, dict[str, Any]]:
    """The run's checkpoint (its data source, an asset per table, a validation definition per suite), in place
    of the one an earlier run of the class left; with the expectation parameters of all its suites."""
    cp_name = f"poc_{ev.test_class}"
    ds_name = f"evidence_{ev.test_class}"
    for name in [cp_name]:
        try:
            ctx.checkpoints.delete(name)
        except Exception:  # noqa: BLE001 - absent on the first run
            pass
    for s, _rel, _p in runnable:
        try:
            ctx.validation_definitions.delete(s.name)
        except Exception:  # noqa: BLE001
            pass
    try:
        ctx.data_sources.delete(ds_name)
    except Exception:  # noqa: BLE001
        pass
    ds = ctx.data_sources.add_pandas_filesystem(ds_name, base_directory=ev.run_dir)
    vds, params_all = [], {}
    for s, rel, params in runnable:
        asset_name = s.table
        try:
            asset = ds.get_asset(asset_name)
        except LookupError:  # the table's file alone: GX globs the whole run (10,000 files at 10,000 pods) else
            asset = ds.add_parquet_asset(asset_name, glob_directive=rel)
        bd = asset.add_batch_definition_path(f"{s.name}", path=rel) if not any(
            b.name == s.name for b in asset.batch_definitions) else asset.get_batch_definition(s.name)
        suite = gx.ExpectationSuite(**s.gx_suite_dict(params))
        try:
            ctx.suites.delete(s.name)
        except Exception:  # noqa: BLE001
            pass
        suite = ctx.suites.add(suite)
        vds.append(ctx.validation_definitions.add(gx.ValidationDefinition(name=s.name, data=bd, suite=suite)))
        params_all.update(params)
    cp = ctx.checkpoints.add(gx.Checkpoint(
        name=cp_name, validation_definitions=vds, result_format={"result_format": "SUMMARY"}, actions=[]))
    return cp, params_all


def _update_data_docs(gx_context: Any, result: Any) -> None:
    """The pages of this checkpoint's results and suites, and the site's index once. (GX's
    ``UpdateDataDocsAction`` rebuilds the index after each suite's result: four to six times a run, and the
    index reads every result the site holds.)"""
    from great_expectations.data_context.types.resource_identifiers import ExpectationSuiteIdentifier

    ids: list = []
    for result_id, vr in result.run_results.items():
        ids += [result_id, ExpectationSuiteIdentifier(name=vr.suite_name)]
    gx_context.build_data_docs(site_names=[SITE], resource_identifiers=ids, dry_run=False, build_index=True)


def _offline_site(docs: Path) -> None:
    """Point the rebuilt Data Docs pages at the site's own copies of their CDN assets (offline_docs)."""
    from gpupoc.validation.offline_docs import AssetMismatch, make_site_offline

    try:
        res = make_site_offline(data_docs_index(docs).parent)
    except (ToolMissing, AssetMismatch) as exc:  # styling never stops a validation
        log.warning("Data Docs pages still load their styles from public CDNs: %s", exc)
        return
    if res.unknown:
        log.warning("Data Docs pages load %d URL(s) with no local copy: %s; add them to "
                    "validation/docs_assets/assets.json", len(res.unknown), ", ".join(res.unknown))


def validate_run_or_raise(run_dir: str | Path, suites_dir: str | Path | None = None,
                          docs_dir: str | Path | None = None, parameters: dict[str, Any] | None = None,
                          ) -> ValidationSummary:
    """``validate_run``, then raise ValidationFailed naming the failed check ids and the result path."""
    summary = validate_run(run_dir, suites_dir, docs_dir, parameters)
    if not summary.success:
        failed_suites = [s.suite for s in summary.suites if s.failed]
        raise ValidationFailed(",".join(failed_suites), summary.failed_checks,
                               str(Path(run_dir) / "validation" / SUMMARY_FILE))
    return summary
