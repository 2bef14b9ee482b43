"""A validated evidence root of a correctly behaving platform (built once per test session:
``tests/session_cache.py``), copied per test that breaks one class."""

import hashlib
import json
import shutil
from datetime import timedelta

import pytest

from gpupoc.validation import synthetic as syn
from tests import session_cache

GOOD_SCORES = {"reviewers": [
    {"name": "Wang Fang", "role": "business", "scores": {"ui_usability": 4, "documentation": 4, "training_cost": 3},
     "comments": {"training_cost": "half a day for a new user"}},
    {"name": "Li Lei", "role": "business", "scores": {"ui_usability": 5, "documentation": 3, "training_cost": 4}}]}


@pytest.fixture(scope="session")
def good_root(tmp_path_factory):
    return session_cache.good_root(tmp_path_factory)


@pytest.fixture(scope="session")
def good_report(good_root, tmp_path_factory):
    """The good root's report as ``build_report`` writes it with no plan and no scores, built once per process for
    the tests that only read it (its ``report`` and the files under its ``out_dir``)."""
    from gpupoc.report import build_report

    return build_report(good_root, out_dir=tmp_path_factory.mktemp("good-report") / "out")


@pytest.fixture(scope="session")
def scored_report(good_root, tmp_path_factory):
    """``good_report`` with the reviewers' scores (``GOOD_SCORES``), built once per process, read only."""
    from gpupoc.report import build_report

    return build_report(good_root, out_dir=tmp_path_factory.mktemp("scored-report") / "out", scorecard=GOOD_SCORES)


@pytest.fixture
def no_chromium(monkeypatch, tmp_path):
    """No Chromium for this test: publishing writes every format but report.pdf, with a warning. For tests that
    check something else than the print (each print starts a Chromium); test_pdf.py, test_summary.py and
    test_service_figures.py check what is printed."""
    monkeypatch.setenv("GPUPOC_CHROMIUM", str(tmp_path / "no-chromium"))


def classes_copy(good_root, dest, *classes):
    """A copy at ``dest`` of the good root's runs of ``classes`` only (``poc_<class>``), for a test whose
    assertions read those classes and which validates every run again: fewer runs to validate."""
    for tc in classes:
        shutil.copytree(good_root / f"poc_{tc}", dest / f"poc_{tc}")
    return dest


@pytest.fixture
def root_copy(good_root, tmp_path):
    dst = tmp_path / "evidence"
    shutil.copytree(good_root, dst, ignore=shutil.ignore_patterns("report"))
    return dst


def write_later_run(root, test_class, tables, run_id="scheduled__2", validate=True, parameters=None, **kw):
    """A newer run of one class (its window ends an hour later), so it becomes the latest; validated, as its
    DAG's validate task would (the report only reads validations), with the plan's ``parameters``."""
    from gpupoc.validation import validate_run

    run = syn.write_run(root, test_class, run_id, tables, window_end=syn.T0 + timedelta(hours=2), **kw)
    if validate:
        validate_run(run, parameters=parameters)
    return run


def write_service_runs(root, faults=frozenset(), parameters=None, tables=None):
    """Later runs of the classes that judge online services, as a plan that runs ``svc-infer`` in every class
    leaves them: congestion and fault recovery with their service tables (``faults``: see
    ``synthetic_services``), utilization with its ``serving`` column; validated as such a plan's classes are.
    ``tables``: per class, tables to put in place of the synthetic ones (None: not collected)."""
    from gpupoc.validation import synthetic_services as ss

    params = {**ss.SERVICE_PARAMETERS, **(parameters or {})}
    for tc in ("queue_congestion", "fault_recovery", "utilization"):
        t = syn.good_tables(tc)
        t.update(ss.service_tables(tc, faults) if tc != "utilization" else {"utilization": ss.serving_utilization()})
        t.update((tables or {}).get(tc, {}))
        write_later_run(root, tc, t, parameters=params)
    return root


def built_root(tmp_path_factory, dest, name, build, classes=None):
    """A copy at ``dest`` of the good root (its runs of ``classes`` only, when given) changed by ``build(root)``
    (later runs written and validated), built once per test session under ``name`` (``tests/session_cache.py``)
    for every test that asks for the same root: ``name`` must say everything ``build`` does."""
    def make(d):
        root = d / "evidence"
        base = session_cache.good_root(tmp_path_factory, f"{name}-base")
        skip = [] if classes is None else [p.name for p in base.glob("poc_*") if p.name[4:] not in classes]
        shutil.copytree(base, root, ignore=shutil.ignore_patterns("report", *skip))
        build(root)

    cached = session_cache.shared(tmp_path_factory, name, make)
    shutil.copytree(cached / "evidence", dest, ignore=shutil.ignore_patterns("report"))
    return dest


def good_service_root(tmp_path_factory, dest):
    """A copy at ``dest`` of the good root with the later service runs of a platform that serves well
    (``write_service_runs(root)``), validated once per test session (``tests/session_cache.py``)."""
    return built_root(tmp_path_factory, dest, "good-service-root", write_service_runs)


def platform_root(tmp_path_factory, dest, platform: dict):
    """A copy at ``dest`` of a root holding good runs of queue congestion and tenant isolation recorded on
    ``platform`` (and none of the good root's runs), validated once per test session per platform."""
    def build(root):
        for tc in ("queue_congestion", "tenant_isolation"):
            write_later_run(root, tc, syn.good_tables(tc), platform=platform)

    key = hashlib.sha256(json.dumps(platform, sort_keys=True).encode()).hexdigest()[:16]
    return built_root(tmp_path_factory, dest, f"platform-{key}", build, classes=())


# Reviewers bound to their Airflow users, as a plan names them; a sign-off counts only when signed in as one.
REVIEWERS = [{"name": "Zhao Min", "role": "security", "airflow_user": "zhao"},
             {"name": "Li Lei", "role": "platform", "airflow_user": "li"},
             {"name": "Wang Fang", "role": "business", "airflow_user": "wang"},
             {"name": "Sun Hua", "role": "management", "airflow_user": "sun"},
             {"name": "赵敏", "role": "security", "airflow_user": "zhaomin"}]
USER_OF = {r["name"]: r["airflow_user"] for r in REVIEWERS}


def plan_file(root, tmp_path, **report):
    """The default plan over ``root`` with ``report`` settings (reviewers: REVIEWERS unless given)."""
    import yaml

    from gpupoc.plan import DEFAULT_PLAN

    data = yaml.safe_load(DEFAULT_PLAN.read_text())
    data["evidence_root"] = str(root)
    data["report"].update({"reviewers": REVIEWERS, **report})
    plan = tmp_path / "plan.yaml"
    plan.write_text(yaml.safe_dump(data, allow_unicode=True))
    return plan


def signed(entry: dict, user: str | None = None) -> dict:
    """A sign-off as the report run stamps it: signed in as ``user`` (default: the reviewer's own)."""
    return {**entry, "signed_in_as": USER_OF[entry["reviewer"]] if user is None else user}
