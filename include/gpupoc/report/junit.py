"""``report.junit.xml``: the report's checks as JUnit test cases, for a CI system to read and gate on.

One ``<testsuite>`` per test class holds its checks (classname = the test class, name = "<check id>: <pass
signal>", properties tier and item); a suite "experience" holds the items reviewers score. A failing check
is a ``<failure>`` with its reason; a check that was not verified, or not applicable (its case never arose),
is a ``<skipped>`` whose message says which, with its reason, never a pass. A test class with no validated run
is one skipped test case, so missing coverage stays visible.
Counts (tests, failures, errors, skipped) are on every suite and on the root.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path

from gpupoc.report.items import ITEMS, TEST_CLASSES
from gpupoc.report.models import ItemResult, Report, Tier, Verdict
from gpupoc.report.wording import Wording

JUNIT_FILE = "report.junit.xml"
EXPERIENCE_SUITE = "experience"
NO_CHECK_SUITE = "items"


@dataclass
class Case:
    """One JUnit test case: a check, a reviewer-scored item, or a missing run."""

    classname: str
    name: str
    verdict: Verdict
    reason: str = ""
    failure_type: str = ""
    properties: dict[str, str] = field(default_factory=dict)


def _check_cases(item: ItemResult, signals: dict[str, str]) -> list[Case]:
    out = []
    for c in item.checks:
        props = {"tier": item.tier.value, "item": item.id, "expectation_suite": c.suite, "table": c.table}
        if c.optional:
            props["optional"] = "true"
        out.append(Case(classname=c.test_class or c.suite.split(".", 1)[0],
                        name=f"{c.check_id}: {signals.get(c.check_id, c.signal)}", verdict=c.verdict,
                        reason=c.reason, failure_type=c.failure_class.value if c.failure_class else "",
                        properties=props))
    return out


def _experience_case(item: ItemResult) -> Case:
    props = {"tier": item.tier.value, "item": item.id}
    if item.scores:
        props["reviewers"] = ", ".join(f"{s.reviewer}={s.score}" for s in item.scores)
    return Case(classname=EXPERIENCE_SUITE, name=f"{item.id}: reviewer scores", verdict=item.verdict,
                reason=item.reason, failure_type=item.failure_class.value if item.failure_class else "",
                properties=props)


def junit_cases(report: Report) -> dict[str, list[Case]]:
    """Suite name -> its test cases: the test classes in their order, then the experience items."""
    words = Wording(report.language)
    signals = words.signals
    suites: dict[str, list[Case]] = {tc: [] for tc in TEST_CLASSES}
    run_classes = {s.test_class for s in report.sources}
    for tc in TEST_CLASSES:
        if tc not in run_classes:
            suites[tc].append(Case(classname=tc, name=f"{tc}: validated run", verdict=Verdict.NOT_VERIFIED,
                                   reason=words.t("junit.no_run", test_class=tc)))
    for item in report.items:
        if ITEMS.get(item.id) is Tier.EXPERIENCE:
            suites.setdefault(EXPERIENCE_SUITE, []).append(_experience_case(item))
        elif not item.checks:
            suites.setdefault(NO_CHECK_SUITE, []).append(Case(
                classname=NO_CHECK_SUITE, name=f"{item.id}: checks", verdict=item.verdict, reason=item.reason,
                properties={"tier": item.tier.value, "item": item.id}))
        for case in _check_cases(item, signals):
            suites.setdefault(case.classname, []).append(case)
    return {name: sorted(cases, key=lambda c: c.name) for name, cases in suites.items() if cases}


def _counts(cases: list[Case]) -> dict[str, str]:
    skipped = sum(c.verdict in (Verdict.NOT_VERIFIED, Verdict.NOT_APPLICABLE) for c in cases)
    return {"tests": str(len(cases)), "failures": str(sum(c.verdict is Verdict.FAIL for c in cases)),
            "errors": "0", "skipped": str(skipped), "time": "0"}


def subject_properties(report: Report) -> list[tuple[str, str]]:
    """What the report judged, as JUnit properties: platform, adapter, Kubernetes version, plan, window, and
    whether the cluster was the simulated one (``unknown`` when the runs did not record it)."""
    s = report.subject
    simulated = "unknown" if s.simulated is None else str(s.simulated).lower()
    return [(k, v) for k, v in (
        ("platform", s.platform), ("adapter", s.adapter), ("kubernetes_version", s.kubernetes_version),
        ("plan_name", s.plan_name), ("plan_hash", ",".join(s.evidence_plan_hashes)),
        ("report_plan_hash", s.report_plan_hash), ("window_start", s.window_start), ("window_end", s.window_end),
        ("timezone", s.timezone), ("simulated_cluster", simulated),
        ("plan_mismatch", str(s.plan_mismatch).lower())) if v]


def _timestamp(generated_at: str) -> str:
    """JUnit's timestamp: ISO 8601 without a zone (UTC)."""
    try:
        dt = datetime.fromisoformat(generated_at)
    except ValueError:
        return ""
    if dt.tzinfo:
        dt = dt.astimezone(timezone.utc)
    return dt.strftime("%Y-%m-%dT%H:%M:%S")


def junit_xml(report: Report) -> bytes:
    """The JUnit XML document of ``report`` (UTF-8)."""
    suites = junit_cases(report)
    words = Wording(report.language)
    skipped = {v: words.t(f"verdict.{v.value}") for v in (Verdict.NOT_VERIFIED, Verdict.NOT_APPLICABLE)}
    every = [c for cases in suites.values() for c in cases]
    root = ET.Element("testsuites", {"name": f"{words.t('title')}: {report.decision.value}", **_counts(every)})
    stamp = _timestamp(report.generated_at)
    for sid, (name, cases) in enumerate(suites.items()):
        attrs = {"name": name, **_counts(cases), "id": str(sid)}
        if stamp:
            attrs["timestamp"] = stamp
        suite = ET.SubElement(root, "testsuite", attrs)
        props = ET.SubElement(suite, "properties")
        for key, value in (("decision", report.decision.value), ("language", report.language),
                           ("evidence_root", report.evidence_root), *subject_properties(report)):
            ET.SubElement(props, "property", {"name": key, "value": value})
        for case in cases:
            tc = ET.SubElement(suite, "testcase", {"classname": case.classname, "name": case.name, "time": "0"})
            cprops = ET.SubElement(tc, "properties")
            for key, value in case.properties.items():
                ET.SubElement(cprops, "property", {"name": key, "value": value})
            if case.verdict is Verdict.FAIL:
                fail = ET.SubElement(tc, "failure", {"message": case.reason, "type": case.failure_type or "fail"})
                fail.text = case.reason
            elif case.verdict in skipped:
                ET.SubElement(tc, "skipped", {"message": f"{skipped[case.verdict]}: {case.reason}"})
    ET.indent(root, space=" ")
    return ET.tostring(root, encoding="utf-8", xml_declaration=True) + b"\n"


def write_junit(report: Report, out_dir: str | Path) -> Path:
    """Write ``report.junit.xml`` next to the other formats; return its path."""
    path = Path(out_dir) / JUNIT_FILE
    path.write_bytes(junit_xml(report))
    return path
