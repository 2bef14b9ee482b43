"""The pipeline's own sentences inside evidence cells, worded again in the report's language.

Some evidence cells join what the platform said with what the pipeline wrote about it: a failure record's
``recovery`` reads ``no pipeline action (the pod ended on its own); platform restarts 0; GPUs released after
7.4s``, its ``user_visible`` the pod's status, a sentence about the log and the log's last lines. The evidence
keeps them as written (the test classes' row builders and probes: ``gpupoc.classes.tenant_isolation.rows``,
``gpupoc.classes.fault_recovery.rows``, ``.fault_record``, ``.faults``). A report in another language than English splits such a cell at the separators
the pipeline joins with (``; `` and `` | ``), words each part the pipeline wrote from the string table
(``phrase.*``) and keeps every other part, the platform's and the workload's text, as a quote. English reports
show the cell as it was.
"""

from __future__ import annotations

import re
from typing import Callable

from gpupoc.report.wording import Wording

# Columns (of failure_records; access_probes' message) whose cells mix the pipeline's words with the platform's.
COMPOSED = {"trigger", "platform_behaviour", "user_visible", "operator_visible", "recovery", "reason", "message"}
# Of those, the columns that hold nothing but such sentences: text of them that no pattern words is quoted.
ONLY_SENTENCES = {"trigger", "platform_behaviour", "recovery"}
_SPLIT = re.compile(r"(; | \| | (?=\[…\]))")  # […]: where a traceback's frames were cut (report.cells)
_N = r"-?\d+(?:\.\d+)?"
_AT = r"\d{4}-\d{2}-\d{2}T[\d:.]+(?:Z|[+-]\d{2}:\d{2})"
# (pattern, string-table key): the pipeline's sentences, as the modules named above write them. A named
# group is a value: ``at`` a time, ``what``/``detail``/``by`` worded again, any other kept as it is.
PATTERNS: list[tuple[re.Pattern[str], str]] = [(re.compile(p), k) for p, k in [
    (rf"^(?P<what>.+?) via (?P<method>[\w.-]+) by (?P<by>.+?) at (?P<at>{_AT})$", "phrase.triggered"),
    (r"^workload exits with a non-zero code$", "phrase.trigger.nonzero_exit"),
    (r"^pod image (?P<image>'[^']*') does not exist$", "phrase.trigger.missing_image"),
    (r"^workload allocates memory beyond its limit$", "phrase.trigger.oom"),
    (r"^the pod's node fails mid-run$", "phrase.trigger.node_failure"),
    (r"^the pod's node gets a NoExecute taint mid-run \(its pods are evicted as a lost node's; the node itself "
     r"stays up\)$", "phrase.trigger.node_taint"),
    (r"^the pod's node is drained mid-run \(planned maintenance: an eviction through the Eviction API, not a "
     r"failure\)$", "phrase.trigger.node_drain"),
    (rf"^workload hangs past the task timeout of (?P<s>{_N})s$", "phrase.trigger.hang"),
    (r"^(?P<tenant>\S+) \(pod submitted with its own token\)$", "phrase.own_token"),
    (r"^phase (?P<phase>\S+)$", "phrase.phase"),
    (r"^reason (?P<reason>\S+)$", "phrase.reason"),
    (rf"^container (?P<state>terminated|waiting|running)(?: (?P<reason>[A-Za-z]+))?(?: exit (?P<code>{_N}))?$",
     "phrase.container"),
    (r"^node (?P<node>\S+)$", "phrase.node"),
    (r"^disruption (?P<disruption>.+)$", "phrase.disruption"),
    (rf"^exit code (?P<code>{_N})$", "phrase.exit_code"),
    (r"^log readable after the failure$", "phrase.log_readable"),
    (r"^log NOT readable after the failure$", "phrase.log_not_readable"),
    (r"^log not checked$", "phrase.log_not_checked"),
    (r"^log not checked: the tenant could not read the pod after the failure$", "phrase.log_not_read"),
    (r"^log not applicable: no container started \((?P<detail>[^)]*)\)$", "phrase.log_not_applicable"),
    (r"^never ran$", "phrase.never_ran"),
    (r"^the status message is what the user sees$", "phrase.status_is_seen"),
    (r"^(?P<n>\d+) Warning event\(s\) \((?P<reasons>[^)]*)\)$", "phrase.warning_events"),
    (r"^(?P<n>\d+) Warning event\(s\)$", "phrase.warning_events_none"),
    (r"^alerts: none$", "phrase.alerts_none"),
    (r"^alerts: (?P<alerts>.+)$", "phrase.alerts"),
    (r"^no pipeline action \(the pod ended on its own\)$", "phrase.no_action"),
    (rf"^(?P<what>delete pod) by (?P<by>\S+) at (?P<at>{_AT}): (?P<detail>.+)$", "phrase.acted"),
    (r"^delete pod$", "phrase.action.delete_pod"),
    (r"^fail-fast on the image pull error$", "phrase.fail_fast"),
    (rf"^task timeout of (?P<s>{_N})s reached$", "phrase.timeout_reached"),
    (r"^HTTP (?P<code>\d+)$", "phrase.http"),
    (rf"^recover node (?P<node>\S+) by (?P<by>\S+) at (?P<at>{_AT})(?P<failed> \(FAILED\))?$", "phrase.recovered"),
    (r"^platform restarts (?P<n>\d+)$", "phrase.platform_restarts"),
    (rf"^GPUs released after (?P<s>{_N})s$", "phrase.released_after"),
    (r"^GPUs NOT released$", "phrase.not_released"),
    (r"^GPU release not observed$", "phrase.release_not_observed"),
    (r"^\((?P<sources>[^)]+)\)$", "phrase.release_sources"),
    (r"^Airflow retries (?P<n>\d+)$", "phrase.airflow_retries"),
    (rf"^the failure was not observed within (?P<s>{_N})s$", "phrase.not_observed"),
    (r"^events could not be listed as the administrator$", "phrase.events_unlisted"),
    (r"^no alert source configured: alerts not verified$", "phrase.no_alert_source"),
    (r"^alert source failed: (?P<error>.+)$", "phrase.alert_source_failed"),
    (r"^no GPU allocation source configured: release not verified$", "phrase.no_gpu_source"),
    (r"^GPU source\(s\) (?P<sources>.+) could not answer$", "phrase.gpu_sources_silent"),
    (r"^Airflow retries not recorded \(the driver ran outside a task\)$", "phrase.retries_unrecorded"),
    (r"^findings: (?P<detail>.+)$", "phrase.findings"),
    (r"^the log is not readable after the failure: the user cannot tell what went wrong$", "phrase.finding.log"),
    (r"^no Warning event recorded the failure: operators see nothing in the events$", "phrase.finding.events"),
    (r"^operators saw neither a Warning event nor an alert$", "phrase.finding.unseen"),
    (rf"^GPUs not released within (?P<s>{_N})s of the failure \(still held per (?P<sources>[^)]+)\)$",
     "phrase.finding.leak"),
    # access probes and over-quota submissions (gpupoc.classes.tenant_isolation: isolation, quotas)
    (r"^(?P<asked>\d+) GPU\(s\) asked, (?P<left>-?\d+) left: (?P<outcome>\w+)$", "phrase.quota_asked"),
    (r"^(?P<who>\S+) could (?P<verb>\w+) (?P<res>\S+) in (?P<ns>\S+) \(HTTP (?P<code>\d+)\): cross-tenant access$",
     "phrase.cross_tenant_access"),
    (r"^access review says allowed but the request was denied: policy and enforcement disagree$",
     "phrase.review_disagrees"),
    (r"^denied, but no audit event with decision forbid records the attempt$", "phrase.denial_unaudited"),
    (r"^quota not enforced: (?P<gpus>\d+) GPU\(s\) requested with (?P<left>-?\d+) left in (?P<quota>\S+), "
     r"the pod was accepted(?: and bound to (?P<node>\S+))?$", "phrase.quota_not_enforced"),
    (r"^the user got no message saying why the pod does not run$", "phrase.no_user_message"),
    # an online service's SLO and a node failure under its replica (gpupoc.pipeline.service_slo,
    # gpupoc.steps.service_collect)
    (rf"^availability (?P<a>{_N})% < (?P<b>{_N})%$", "phrase.slo.availability_below"),
    (rf"^p(?P<q>95|99) (?P<v>{_N}) ms > (?P<b>{_N}) ms$", "phrase.slo.latency_above"),
    (rf"^availability (?P<a>{_N})%, worst p95 (?P<p95>{_N}|None) ms, worst p99 (?P<p99>{_N}|None) ms$",
     "phrase.slo.met"),
    (r"^no traffic rows: the load pod wrote none$", "phrase.slo.no_traffic"),
    (r"^harness lag: (?P<late_sent>\d+) of (?P<sent>\d+) requests sent late, (?P<late_read>\d+) answers read late, "
     r"judged on the replica's own time$", "phrase.slo.harness_lag"),
    (rf"^not verified: the load generator sent (?P<a>{_N})% of requests late and read (?P<b>{_N})% of answers late "
     rf"\((?P<d>{_N})% of the window, more than (?P<m>{_N})%\): harness lag, not the platform$",
     "phrase.slo.lag_not_verified"),
    (r"^the failed node's replica stayed a ready endpoint while the observer looked$",
     "phrase.service.endpoint_stayed"),
    (r"^no replacement replica became ready while the observer looked$", "phrase.service.no_replacement"),
    (r"^the node was not failed$", "phrase.service.node_not_failed"),
]]
ATTACHED = re.compile(r"^\(")  # a parenthesis says more of the part before it: no separator between them
WORDED_AGAIN = {"what", "detail", "by"}  # values that are themselves the pipeline's words
Part = tuple[str, bool]  # (text, quoted)


def _container(words: Wording, state: str, reason: str, code: str) -> str:
    """``container terminated Error exit 3``: the state worded, the platform's reason and the exit code kept."""
    text = words.t("phrase.container", state=words.t(f"container_state.{state}"))
    text += words.t("paren", text=reason) if reason else ""
    return text + (words.t("reason_sep") + words.t("phrase.exit_code", code=code) if code else "")


def _sources(names: str, words: Wording) -> str:
    """``dcgm-exporter via prometheus,kubernetes-api``: the sources that answered, the way each was read worded."""
    out = []
    for name in names.split(","):
        source, _, through = name.partition(" via ")
        out.append(words.t("phrase.source_via", source=source, through=through) if through else source)
    return words.t("list_sep").join(out)


def _sentence(text: str, words: Wording, when: Callable[[str], str]) -> str | None:
    """``text`` worded in ``words``' language when it is one of the pipeline's sentences, else None."""
    for pattern, key in PATTERNS:
        m = pattern.match(text)
        if m is None or key not in words.table:
            continue
        if key == "phrase.container":
            return _container(words, m["state"], m["reason"] or "", m["code"] or "")
        if key == "phrase.release_sources":
            return words.t(key, sources=_sources(m["sources"], words))
        values = {}
        for name, value in m.groupdict().items():
            value = value or ""
            if name == "at":
                value = when(value)
            elif name in WORDED_AGAIN and value:
                value = _sentence(value, words, when) or "".join(t for t, _ in parts(value, words, when))
            elif name == "method":  # the injector's method (gpupoc.classes.fault_recovery.injectors.Injection.method)
                value = words.table.get(f"inject_method.{value}", value)
            elif name == "outcome":  # an over-quota submission's outcome (gpupoc.classes.tenant_isolation.quotas)
                value = words.table.get(f"over_quota.{value}", value)
            elif name == "node":
                value = words.t("phrase.bound_to", node=value) if key == "phrase.quota_not_enforced" and value \
                    else value
            elif name == "failed":
                value = words.t("phrase.failed_suffix") if value else ""
            elif value == "None":  # a figure the pipeline had none of (a latency with no answer)
                value = words.t("cell.no_value")
            values[name] = value
        return words.t(key, **values) if values else words.t(key)
    return None


def parts(text: str, words: Wording, when: Callable[[str], str]) -> list[Part]:
    """``text`` as parts: the pipeline's sentences worded (joined by the language's separator), every other run
    of text kept as it was and marked as a quote."""
    whole = _sentence(text, words, when)  # a sentence with a separator of its own ("…; the node stays up)")
    if whole is not None:
        return [(whole, False)]
    pieces = _SPLIT.split(text)
    out: list[Part] = []
    pending_sep = ""
    for i in range(0, len(pieces), 2):
        piece, sep = pieces[i], pieces[i + 1] if i + 1 < len(pieces) else ""
        own = _sentence(piece, words, when)
        if own is None and out and out[-1][1]:  # a quote goes on across the pipeline's separators
            out[-1] = (out[-1][0] + pending_sep + piece, True)
        else:
            if out and not (own is not None and ATTACHED.match(piece)):
                out.append((words.t("reason_sep"), False))
            out.append((piece, True) if own is None else (own, False))
        pending_sep = sep
    return out


def worded(text: str, words: Wording, when: Callable[[str], str]) -> list[Part] | None:
    """The parts of a composed cell in a language other than English; None for English (shown as it was)."""
    if words.language == "en" or not text:
        return None
    return parts(text, words, when)
