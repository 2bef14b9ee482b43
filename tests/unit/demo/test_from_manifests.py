from gpupoc.demo.from_manifests import preflight_once_monitoring_is_up
from gpupoc.preflight.model import PreflightReport, failed, ok


class FakeTime:
    def __init__(self):
        self.now = 0.0

    def clock(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds


def _report(*failing: str) -> PreflightReport:
    results = [ok("api.reachable", "", "answers")] + [failed(c, "training", "not yet", "wait") for c in failing]
    return PreflightReport("plan.yaml", results)


def _run(reports: list[PreflightReport]):
    calls = []

    def run() -> PreflightReport:
        calls.append(1)
        return reports[min(len(calls), len(reports)) - 1]
    return run, calls


def test_the_preflight_is_asked_again_while_only_the_fresh_monitoring_stack_lacks_its_first_scrape():
    run, calls = _run([_report("prometheus.series", "alerting"), _report("prometheus.series"), _report()])
    lines: list[str] = []
    t = FakeTime()
    report = preflight_once_monitoring_is_up(run, lines.append, clock=t.clock, sleep=t.sleep)
    assert report.passed and len(calls) == 3
    assert len(lines) == 1 and "first scrape" in lines[0] and "alerting, prometheus.series" in lines[0], lines


def test_any_other_failure_ends_the_preflight_at_once():
    run, calls = _run([_report("prometheus.series", "identities.token"), _report()])
    report = preflight_once_monitoring_is_up(run, lambda line: None, sleep=lambda s: None)
    assert len(calls) == 1 and {r.check for r in report.failures} == {"prometheus.series", "identities.token"}


def test_a_monitoring_stack_that_never_scrapes_fails_the_preflight_after_the_warmup_naming_the_series():
    run, calls = _run([_report("prometheus.series")])
    t = FakeTime()
    report = preflight_once_monitoring_is_up(run, lambda line: None, warmup_seconds=30, poll=3,
                                             clock=t.clock, sleep=t.sleep)
    assert [r.check for r in report.failures] == ["prometheus.series"] and t.now >= 30 and len(calls) == 11
