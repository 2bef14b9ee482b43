"""Every class's verdicts hold on an API server with manners: tenant isolation, utilization, fault recovery and
audit and operations each run through the pipeline's own steps and all the probes of their class
(``class_runner``: observer, probes, release, collection, validation; only Airflow's wave tasks are stood in
for) on the plain simulated cluster and under each of the API's behaviour profiles (``gpupoc sim serve
--behaviour``): ``throttled`` (429 with ``Retry-After``, bursts of 503/500), ``watch-cuts`` (every watch ended
after a few seconds) and ``watch-expiry`` (history compacted: watches end with 410 Gone and list again). Every
item verdict of each run must equal its class's plain run's, no workload may be lost and no step may fail; each
profile must have been met (a request answered 429; a watch of the wave's or the services' observer ended by
410 Gone and listed again), and no observer may list a collection again but after a 410.
The congestion class is checked the same way, under every behaviour profile, in
``test_verdict_stability.py``.

One small plan per class (short virtual workloads, the class's default probes and services); utilization and
fault recovery read GPU samples and alerts from a real Prometheus, Alertmanager and alert receiver of their
own (``gpupoc stack up``), as on a real cluster. The sixteen runs, each on its own simulated cluster, run side
by side: they mostly wait for their waves and probes.
"""

from __future__ import annotations

import json
import multiprocessing
import os
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from gpupoc.classes.registry import definition
from gpupoc.steps.service_observer import API_FILE as SERVICES_API

from .class_runner import ClassRun, run_class
from .plans import plan_on_cluster
from .test_verdict_stability import item_verdicts, observer_collections, same_items

MONITORING = os.access("/usr/bin/prometheus", os.X_OK) and os.access("/usr/bin/prometheus-alertmanager", os.X_OK)
pytestmark = [
    pytest.mark.integration,
    pytest.mark.timeout(1200),
    pytest.mark.xdist_group("class-verdict-stability"),
    pytest.mark.skipif(not MONITORING,
                       reason="Prometheus/Alertmanager not installed: run scripts/install-monitoring.sh"),
]

TI, UT, FR, AT = "tenant_isolation", "utilization", "fault_recovery", "audit_trail"
CLASSES = (TI, UT, FR, AT)
PROFILES = ("throttled", "watch-cuts", "watch-expiry")
PLAIN = ""
SEED = 1
AT_ONCE = 8  # runs side by side
WITH_MONITORING = (UT, FR)  # their collectors read Prometheus (GPU samples) and the alerts


def _shorten(plan: dict, seconds: dict[str, int]) -> None:
    for w in plan["workloads"]:
        if w["name"] in seconds:
            w["duration_seconds"] = seconds[w["name"]]


def isolation(plan: dict) -> None:
    """Two tenants over-ask the training pool (28 GPUs of 24) for 12 s while every cross-tenant attempt is
    made and usage against quota is sampled every 2 s."""
    _shorten(plan, {"xt-train-4g": 12, "v-infer-1g": 12, "v-train-1g": 8})
    plan["test_classes"][TI]["quota_sample_interval_seconds"] = 2


def utilization(plan: dict) -> None:
    """The default wave (busy, idle and serving GPUs) for 24 s, sampled every 2 s."""
    _shorten(plan, {"train-2g": 24, "v-idle-2g": 24, "v-util-train-4g": 24, "infer-1g": 24, "v-util-infer-1g": 24})
    plan["test_classes"][UT]["sample_step_seconds"] = 2


def faults(plan: dict) -> None:
    """Every kind of injection, shorter: an exit, a missing image, an OOM, a hang, a node failure; and a node
    failed under a serving replica while its traffic runs."""
    _shorten(plan, {"fail-exit": 3, "oom-kill": 4, "hang": 20, "missing-image": 5, "train-long": 40})
    fr = plan["test_classes"][FR]
    for inj in fr["injections"]:
        if inj["kind"] == "missing_image":
            inj["observe_seconds"] = 8
        elif inj["kind"] == "hang":
            inj["timeout_seconds"] = 10
        elif inj["kind"] == "node_failure":
            inj.update(at_seconds=3, recover_after_seconds=10)
    fr["services"][0]["traffic_seconds"] = 65  # the replacement's 60 s bound after the failure
    fr["service_failures"][0].update(at_seconds=3, recover_after_seconds=15)


def audit(plan: dict) -> None:
    """The default wave, the quota change, the artifact handed over and the service scaled, shorter."""
    _shorten(plan, {"v-train-1g": 8, "v-infer-1g": 8, "train-artifact": 6, "eval-artifact": 5})


SHAPES = {TI: isolation, UT: utilization, FR: faults, AT: audit}


def class_plan(tmp: Path, test_class: str, sim, stack: dict | None) -> Path:
    """The default plan on ``sim``, shaped for ``test_class``, reading ``stack``'s Prometheus and alerts."""
    plan = plan_on_cluster("default", tmp, sim.kubeconfig_http, sim.audit_log)
    SHAPES[test_class](plan)
    if stack:
        plan["evidence_sources"].update(prometheus_url=stack["prometheus"]["url"],
                                        alertmanager_url=stack["alertmanager"]["url"],
                                        alert_receiver_record=stack["receiver"]["record"])
    path = tmp / "plan.yaml"
    path.write_text(yaml.safe_dump(plan, sort_keys=False))
    return path


def _stack(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "gpupoc.cli", "stack", *args], capture_output=True, text=True,
                          timeout=120)


def stack_up(data_dir: Path, sim) -> dict:
    """Prometheus, Alertmanager and the alert receiver on ``sim``, scraping and evaluating every 2 s."""
    up = _stack("up", "--data-dir", str(data_dir), "--sim-url", sim.http_url, "--scrape-interval", "2s",
                "--evaluation-interval", "2s", "--rule-for", "GpuNodeNotReady=2s")
    assert up.returncode == 0, up.stdout + up.stderr
    return json.loads((data_dir / "stack.json").read_text())


def _run(tmp: Path, test_class: str, profile: str) -> None:
    """One class's run in a process of its own, on a simulated cluster (and a monitoring stack) of its own,
    stopped at the end; its ``ClassRun`` pickled to ``tmp/run.pickle``, or what stopped it to ``tmp/run.error``."""
    import faulthandler
    import pickle
    import traceback

    from .conftest import launch

    with open(tmp / "run.error", "w") as log:
        faulthandler.enable(log)
        sim = launch(tmp / "sim", behaviours=profile, behaviour_seed=SEED)
        stack = tmp / "monitoring" if test_class in WITH_MONITORING else None
        try:
            plan = class_plan(tmp, test_class, sim, stack_up(stack, sim) if stack else None)
            run = run_class(plan, test_class, f"manners__{test_class}_{profile or 'plain'}",
                            probes=tuple(task for task, _ in definition(test_class).probes))
            (tmp / "run.pickle").write_bytes(pickle.dumps(run))
        except BaseException:
            log.write(traceback.format_exc())
            raise
        finally:
            if stack:
                _stack("down", "--data-dir", str(stack))
            sim.stop()


def run_side_by_side(cases: dict[tuple[str, str], Path], at_once: int) -> dict[tuple[str, str], ClassRun]:
    """Each case's run in a forked process, ``at_once`` at a time, in the order given; a run whose process
    ended without its result is a run with that error, so that every other run is still judged."""
    import pickle
    import time

    ctx = multiprocessing.get_context("fork")
    todo, running, out = list(cases.items()), {}, {}
    while todo or running:
        while todo and len(running) < at_once:
            (test_class, profile), tmp = todo.pop(0)
            proc = ctx.Process(target=_run, args=(tmp, test_class, profile))
            proc.start()
            running[(test_class, profile)] = (proc, tmp)
        for case, (proc, tmp) in list(running.items()):
            if proc.exitcode is None:
                continue
            del running[case]
            result, error = tmp / "run.pickle", tmp / "run.error"
            out[case] = pickle.loads(result.read_bytes()) if result.is_file() else ClassRun(
                tmp, {}, {"outcomes": {}}, errors=[f"the run's process exited {proc.exitcode}: "
                                                   f"{error.read_text()[-3000:] if error.is_file() else ''}"])
        time.sleep(0.5)
    return out


@pytest.fixture(scope="module")
def case_dirs(tmp_path_factory) -> dict[tuple[str, str], Path]:
    """Each run's directory: its simulated cluster (``sim/``, its audit log), plan and evidence."""
    return {(test_class, profile): tmp_path_factory.mktemp(f"{test_class}-{profile or 'plain'}")
            for test_class in (FR, UT, TI, AT) for profile in (PLAIN, *PROFILES)}


@pytest.fixture(scope="module")
def runs(case_dirs) -> dict[tuple[str, str], ClassRun]:
    """Each class on the plain cluster and under each profile, each on its own simulated cluster; the two
    longest classes (a wave of a minute, then each sample or alert read from Prometheus) first."""
    return run_side_by_side(case_dirs, AT_ONCE)


def answered(run_dir: Path, code: int) -> int:
    """How many of the run's requests its simulated API server answered with ``code`` (its audit log)."""
    lines = (run_dir / "sim" / "audit.log").read_text().splitlines()
    statuses = [json.loads(line).get("responseStatus") or {} for line in lines if line.strip()]
    return sum(1 for status in statuses if status.get("code") == code)


def watched(run: ClassRun) -> list[dict]:
    """The collections the wave's observer and the services' observer watched (fault recovery's wave observer
    has no wave to watch: its injections are followed by their probe, its service by the services' observer)."""
    return observer_collections(run) + (run.file(SERVICES_API) or [])


@pytest.mark.parametrize("test_class", CLASSES)
def test_on_the_plain_cluster_each_class_passes_and_loses_nothing(runs, test_class):
    plain = runs[(test_class, PLAIN)]
    assert not plain.errors, plain.errors
    items = item_verdicts(plain.verdicts, plain.unseen)
    assert set(items.values()) <= {"pass", "not_applicable"} and "pass" in items.values(), \
        (items, {c: (v, plain.reasons.get(c)) for c, v in plain.verdicts.items() if v != "pass"})
    assert "lost" not in plain.summary["outcomes"], plain.summary


@pytest.mark.parametrize("test_class", CLASSES)
@pytest.mark.parametrize("profile", PROFILES)
def test_each_class_reaches_the_plain_clusters_verdicts_under_the_apis_manners(runs, case_dirs, test_class, profile):
    run, plain = runs[(test_class, profile)], runs[(test_class, PLAIN)]
    assert not run.errors, run.errors
    mine, theirs = same_items(run, plain)
    assert mine == theirs, (f"{test_class} under {profile}: "
                            f"{ {c: (v, run.reasons.get(c)) for c, v in run.verdicts.items()} } against the plain "
                            f"cluster's { {c: (v, plain.reasons.get(c)) for c, v in plain.verdicts.items()} }")
    assert "lost" not in run.summary["outcomes"], run.summary
    observed = watched(run)
    assert observed and all(c["lists"] == 1 + c["relists_after_gone"] for c in observed if not c["listing_only"]), \
        f"an observer listed a collection again without a 410 Gone: {observed}"
    if profile == "watch-expiry":
        assert sum(c["relists_after_gone"] for c in observed) >= 1, \
            f"no watch of the observers met a 410 Gone: watch-expiry untested ({observed})"
    if profile == "throttled":
        assert answered(case_dirs[(test_class, profile)], 429) >= 1, "no request was answered 429: throttled untested"
