"""A Chinese report is Chinese throughout: every header, value, figure, chart and sentence the report or the
pipeline writes, in every format, with only the platform's and the workloads' own text (quoted) and the names
of things (ids, namespaces, pods, the plan's names) left as they are.

The report is built from the synthetic evidence of a correct platform, with failure records written by the
pipeline's own row builder (``gpupoc.classes.fault_recovery.rows.failure_records``) from records in every state a
fault run leaves (log readable, not applicable, unreadable; the pipeline deleting the pod or recovering a node;
GPUs released or not; reasons and findings), waits whose bottleneck is a shortage or a queue, a preemption, and
an online service that misses its SLO, has a replica preempted and survives a node failure too slowly (its
tables, figures, charts and reasons).
The scan takes every ASCII word of what a reader sees and fails on one that is neither a name from the data nor
a term the Chinese report keeps (GPU, Pod, Kubernetes …).
"""

from __future__ import annotations

import dataclasses
import html
import re
import shutil

import pandas as pd
import pytest

from .conftest import GOOD_SCORES, write_service_runs
from gpupoc.classes.fault_recovery.rows import failure_records
from gpupoc.classes.fault_recovery.fault_record import FaultRecord
from gpupoc.report import build_report
from gpupoc.report.cells import QUOTED, VALUE_WORDS
from gpupoc.report.phrases import COMPOSED
from gpupoc.validation import synthetic as syn

# Terms a Chinese report writes as they are: products, kinds of Kubernetes objects, formats, units, event types.
TERMS = {"GPU", "GPUs", "Pod", "Kubernetes", "Airflow", "POC", "UTC", "CSV", "HTML", "parquet", "HTTP", "SHA-256",
         "MiB", "KiB", "GiB", "B", "Data", "Docs", "Secret", "ConfigMap", "Service", "Warning", "DAG", "ETA", "SLO",
         "P95", "p95", "p50", "p90", "p99", "OOM", "ResourceQuota", "RFC", "report.reviewers", "gpupoc.io/simulated",
         "report.html", "nvidia.com/gpu", "HAMi", "vGPU"}
CAMEL = re.compile(r"[A-Z][a-z]+(?:[A-Z][a-z0-9]*)*")  # Kubernetes phases and reasons, alert names
# The fixture's other names: the reviewers' own words, the GPU release sources, the identity that recovered a
# node, the report's DAG.
NAMES = {w for r in GOOD_SCORES["reviewers"] for v in (r["name"], *r.get("comments", {}).values())
         for w in v.split()} | {"dcgm-exporter", "prometheus", "kubernetes-api", "kubernetes-admin", "poc_report"}
WORD = re.compile(r"[A-Za-z][A-Za-z0-9_.:/'\-]*[A-Za-z0-9]|[A-Za-z]")
AT = "2026-11-30T08:01:00Z"
SERVICE_FAULTS = frozenset({"breach", "unready", "preempted_low", "stale", "slow_replacement"})
COMPOSED_IN = {"failure_records", "service_slo", "service_recovery"}  # tables whose reasons are worded again


def _fault_rows() -> pd.DataFrame:
    """Failure records as the fault run writes them (``gpupoc.classes.fault_recovery.fault_record``, ``faults``)."""
    base = dict(tenant="team-nlp", namespace="team-nlp", trigger_method="workload-spec", triggered_at=AT,
                triggered_by="team-nlp (pod submitted with its own token)", node="training-0", airflow_retries=1,
                verified=True, release_source="dcgm-exporter via prometheus,kubernetes-api", gpus_released=True)
    records = [
        FaultRecord(scenario="nonzero_exit", pod="fr-exit", trigger="workload exits with a non-zero code",
                    phase="Failed", container_state="terminated", container_reason="Error", exit_code=3,
                    user_status_message="Failed | Error | exit code 3", user_log_readable_after=True,
                    user_log_tail="epoch=3 loss=nan\nTrainingDiverged: loss became NaN", alerts="PodFailed",
                    release_s=7.4, **base),
        FaultRecord(scenario="missing_image", pod="fr-image", trigger="pod image 'registry.invalid/x:1' does not exist",
                    phase="Pending", container_state="waiting", container_reason="ImagePullBackOff",
                    container_message='Back-off pulling image "registry.invalid/x:1"', warning_events=3,
                    warning_reasons="Failed", user_status_message="Pending | ImagePullBackOff",
                    user_log_note="log not applicable: no container started (ImagePullBackOff); the status message "
                                  "is what the user sees", alerts="GpuAllocatedButIdle", release_s=1.1,
                    recovery_action=f"delete pod by team-nlp at {AT}: fail-fast on the image pull error; HTTP 200",
                    **base),
        FaultRecord(scenario="hang", pod="fr-hang", trigger="workload hangs past the task timeout of 30s",
                    phase="Running", container_state="running", user_status_message="Running",
                    user_log_readable_after=False, release_s=None,
                    recovery_action=f"delete pod by team-nlp at {AT}: task timeout of 30s reached; HTTP 200",
                    reason="no alert source configured: alerts not verified",
                    findings="the log is not readable after the failure: the user cannot tell what went wrong; "
                             "GPUs not released within 60s of the failure (still held per dcgm-exporter)",
                    **{**base, "gpus_released": False}),
        FaultRecord(scenario="node_failure", pod="fr-node", trigger="the pod's node fails mid-run",
                    phase="Failed", status_reason="NodeLost", container_state="terminated",
                    container_reason="ContainerStatusUnknown", exit_code=137, warning_events=1,
                    warning_reasons="NodeNotReady", user_log_readable_after=None, release_s=9.4,
                    recovery_action=f"recover node training-0 by kubernetes-admin at {AT} (FAILED)",
                    reason="the failure was not observed within 120s; Airflow retries not recorded (the driver "
                           "ran outside a task)", **{**base, "airflow_retries": None, "gpus_released": None}),
    ]
    return pd.DataFrame([dataclasses.asdict(r) for r in failure_records(records)])


def _queue_tables() -> dict[str, pd.DataFrame]:
    t = syn.good_tables("queue_congestion")
    ex = t["explanations"]
    ex["reconstructed_bottleneck"] = ["none", "none"] + ["insufficient_gpus", "behind_queue"] * 5
    wr = t["workload_runs"]
    wr.loc[0, ["outcome", "outcome_reason", "final_attempt"]] = ["preempted", "Preempted", False]
    return t


@pytest.fixture(scope="module")
def zh_root(good_root, tmp_path_factory):
    root = tmp_path_factory.mktemp("zh-all") / "evidence"
    shutil.copytree(good_root, root, ignore=shutil.ignore_patterns("report"))
    write_service_runs(root, SERVICE_FAULTS, tables={
        "fault_recovery": {"failure_records": _fault_rows()}, "queue_congestion": _queue_tables(),
        "utilization": {"vgpu_utilization": syn.vgpu_utilization()}})  # HAMi's slices beside the services
    return root


@pytest.fixture(scope="module")
def zh(zh_root):
    return build_report(zh_root, out_dir=zh_root / "report" / "zh", language="zh", scorecard=GOOD_SCORES)


def _names(root) -> set[str]:
    """Every word of a name in the evidence: the cells of columns that hold names and ids, not the pipeline's
    own values (outcomes, bottlenecks, scenarios, …), nor the platform's text (quoted). Of the failure records'
    sentences only the platform's identifiers (``NodeLost``, ``ImagePullBackOff``, an alert's name) count."""
    out: set[str] = set()
    for path in root.glob("poc_*/*/tables/*.parquet"):
        df = pd.read_parquet(path)
        composed = COMPOSED if path.stem in COMPOSED_IN else set()
        skip = set(VALUE_WORDS) | (QUOTED - composed)
        for col in df.columns.difference(sorted(skip)):
            if df[col].dtype == object or str(df[col].dtype).startswith("str"):
                for v in df[col].dropna().astype(str).unique():
                    words = set(WORD.findall(v))
                    out |= {w for w in words if CAMEL.fullmatch(w)} if col in composed else words
    return out


def _seen(path) -> str:
    """What a reader sees of one file, without the quotes of the platform's and workloads' text."""
    text = path.read_text(encoding="utf-8")
    if path.suffix in (".html", ".svg"):
        text = re.sub(r"<(style|script)>.*?</\1>", " ", text, flags=re.S)
        text = re.sub(r'<q class="quote">.*?</q>', " ", text, flags=re.S)
        text = re.sub(r'<a href="[^"]*">', " ", text)
        return html.unescape(re.sub(r"<[^>]+>", " ", text))
    if path.suffix == ".xml":
        shown = re.findall(r'(?:testsuites name|testcase classname="[^"]*" name|message)="([^"]*)"', text)
        return html.unescape(" ".join(shown))
    text = re.sub(r"“[^”]*”", " ", text)  # Markdown: quotes
    return re.sub(r"\]\([^)]*\)|`[^`]*`", " ", text)  # link targets and code (paths, ids)


def _english(text: str, allowed: set[str]) -> list[str]:
    left = []
    for w in WORD.findall(text):
        bare = w.rstrip(".:")
        if bare in allowed or bare in TERMS or bare in NAMES or "/" in bare or bare.endswith(".json") \
                or re.fullmatch(r"[A-Z]+-\d+|#\d+|v[\d.]+|[a-f0-9]{8,}", bare):  # ids, paths, hashes
            continue
        left.append(w)
    return left


@pytest.mark.parametrize("name", ["report.html", "summary.html", "report.md", "report.junit.xml"])
def test_a_chinese_report_has_no_english_header_value_or_sentence_of_its_own(zh, zh_root, name):
    allowed = _names(zh_root) | {zh.report.subject.platform, zh.report.subject.adapter, zh.report.subject.plan_name}
    allowed |= {w for s in zh.report.sources for w in WORD.findall(s.run_dir)}
    left = _english(_seen(zh.out_dir / name), allowed | _plan_words())
    assert not left, f"{name}: English words in a Chinese report: {sorted(set(left))[:40]}"


def test_every_evidence_page_and_chart_is_chinese(zh, zh_root):
    allowed = _names(zh_root) | _plan_words()
    pages = sorted((zh.out_dir / "evidence").glob("*/*.html")) + sorted((zh.out_dir / "charts").glob("*.svg"))
    assert pages, "no evidence page or chart written"
    left = {p.name: sorted(set(_english(_seen(p), allowed))) for p in pages}
    assert not {k: v for k, v in left.items() if v}, left


def test_the_pipeline_s_sentences_are_worded_and_the_platform_s_text_is_quoted(zh):
    page = (zh.out_dir / "report.html").read_text(encoding="utf-8")
    for english in ("no pipeline action", "log readable after the failure", "GPUs released after",
                    "insufficient_gpus", "behind_queue", "Warning event(s)", "pod submitted with its own token"):
        assert english not in page, english
    for chinese in ("流水线未采取任何动作（Pod 自行结束）", "故障后日志仍可读", "GPU 在 7.4 秒后释放",
                    "空闲 GPU 不足", "排在前面的工作负载之后", "3 个 Warning 事件（Failed）", "（失败）",
                    "日志不适用：没有容器启动过"):
        assert chinese in page, chinese
    assert '<q class="quote">Back-off pulling image &#34;registry.invalid/x:1&#34;</q>' in page


def test_the_services_pages_word_the_pipeline_s_reasons_and_the_platform_s_message_is_a_quote(zh):
    slo = (zh.out_dir / "evidence" / "queue_congestion" / "service_slo.html").read_text(encoding="utf-8")
    assert "可用率 82.5%，低于 SLO 的 99%；p95 延迟 800 毫秒，高于 SLO 的 500 毫秒" in slo and "availability" not in slo
    recovery = (zh.out_dir / "evidence" / "fault_recovery" / "service_recovery.html").read_text(encoding="utf-8")
    assert "观测期间故障节点上的副本一直是就绪端点" in recovery and "模拟集群的故障注入接口" in recovery
    replicas = (zh.out_dir / "evidence" / "fault_recovery" / "service_replicas.html").read_text(encoding="utf-8")
    assert '<q class="quote">Taint manager: deleting due to NoExecute taint</q>' in replicas and "被驱逐" in replicas
    page = (zh.out_dir / "report.html").read_text(encoding="utf-8")
    assert "达到 SLO 的在线服务" in page and "在线服务 svc-infer-b7b888（故障恢复）" in page


def test_times_are_local_without_microseconds_and_units_are_chinese(zh):
    text = _seen(zh.out_dir / "report.html") + _seen(zh.out_dir / "report.md")
    assert not re.search(r"\d{2}:\d{2}:\d{2}\.\d", text), "a time with fractions of a second"
    assert not re.search(r"\d{4}-\d{2}-\d{2}T\d{2}", text), "an ISO time left as stored"
    charts = " ".join(p.read_text(encoding="utf-8") for p in (zh.out_dir / "charts").glob("*.svg"))
    assert "秒" in charts and not re.search(r"\d s<", charts)


def test_chinese_sentences_use_chinese_punctuation(zh):
    text = _seen(zh.out_dir / "report.html") + _seen(zh.out_dir / "summary.html") + _seen(zh.out_dir / "report.md")
    mixed = re.findall(r"[\u4e00-\u9fff][:;,(]|[)][\u4e00-\u9fff]|[\u4e00-\u9fff] \(", text)
    assert not mixed, f"ASCII punctuation in Chinese sentences: {sorted(set(mixed))}"


def test_an_english_report_of_the_same_evidence_keeps_the_pipeline_s_words(zh_root, tmp_path):
    en = build_report(zh_root, out_dir=tmp_path / "en", language="en", scorecard=GOOD_SCORES)
    page = (en.out_dir / "report.html").read_text(encoding="utf-8")
    assert "no pipeline action (the pod ended on its own); platform restarts 0; GPUs released after 7.4s" in page
    assert "nonzero_exit" in page and "故障" not in page


def _plan_words() -> set[str]:
    """The default plan's names (tenants, pools, priority classes, reviewers) and its field names (thresholds):
    the plan's data, quoted by the report as it is."""
    import yaml

    from gpupoc.plan import DEFAULT_PLAN

    words: set[str] = set()

    def walk(node):
        if isinstance(node, dict):
            for k, v in node.items():
                words.update(WORD.findall(str(k)) if "_" in str(k) else ())  # a field name, as thresholds are
                walk(v)
        elif isinstance(node, list):
            for v in node:
                walk(v)
        elif isinstance(node, str) and " " not in node.strip():
            words.update(WORD.findall(node))

    walk(yaml.safe_load(DEFAULT_PLAN.read_text()))
    return words
