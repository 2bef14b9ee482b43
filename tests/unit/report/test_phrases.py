"""The pipeline's sentences inside evidence cells, worded in Chinese part by part; the platform's text between
them stays a quote, and an English report keeps the cell as it was."""

from gpupoc.classes.tenant_isolation.rows import access_probes
from gpupoc.classes.tenant_isolation.quotas import OverQuotaResult
from gpupoc.report.cells import cell, local_time
from gpupoc.report.phrases import parts, worded
from gpupoc.report.wording import Wording

ZH, EN = Wording("zh"), Wording("en")


def _when(at: str) -> str:
    return local_time(at, "Asia/Shanghai")


def test_each_part_the_pipeline_wrote_is_worded_and_the_platform_s_parts_are_quotes():
    got = parts("Failed | Error | exit code 3; log readable after the failure; epoch=3 loss=nan; Traceback", ZH, _when)
    assert got == [("Failed | Error", True), ("；", False), ("退出码 3", False), ("；", False),
                   ("故障后日志仍可读", False), ("；", False), ("epoch=3 loss=nan; Traceback", True)]


def test_values_inside_a_sentence_are_worded_too_and_times_are_local():
    text = ("delete pod by team-nlp at 2026-11-30T08:01:00Z: task timeout of 30s reached; HTTP 200; "
            "GPUs released after 4.7s; (dcgm-exporter via prometheus,kubernetes-api)")
    shown = "".join(t for t, _ in parts(text, ZH, _when))
    assert shown == ("team-nlp 于 2026-11-30 16:01:00 删除 Pod：达到任务超时时间 30 秒；HTTP 状态码 200；"
                     "GPU 在 4.7 秒后释放（据 dcgm-exporter（经 prometheus）、kubernetes-api）")


def test_an_over_quota_submission_s_message_is_worded_around_the_platform_s_answer():
    row = OverQuotaResult(tenant="team-nlp", namespace="team-nlp", quota="team-nlp-gpu", pod="over-quota-0",
                          requested_gpus=4, remaining_gpus=0, outcome="blocked", http_status=403, at="2026-11-30T08:00:00Z",
                          user_message='pods "over-quota-0" is forbidden: exceeded quota')
    message = access_probes([], [row])[0].message
    c = cell(message, "message", ZH)
    assert c.parts[0] == ("申请 4 个 GPU，剩余 0 个：被阻止", False)
    assert ('pods "over-quota-0" is forbidden: exceeded quota', True) in c.parts


def test_a_cell_with_no_sentence_of_the_pipeline_stays_one_quote_and_english_is_unchanged():
    assert worded("no pipeline action (the pod ended on its own)", EN, _when) is None
    assert cell("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.", "message", ZH).parts == ()
    assert cell("0/3 nodes are available: 3 Insufficient nvidia.com/gpu.", "message", ZH).quote
    recovery = "no pipeline action (the pod ended on its own); platform restarts 0"
    assert cell(recovery, "recovery", EN).text == recovery


def test_a_sentence_with_a_separator_of_its_own_is_worded_whole():
    trigger = ("the pod's node gets a NoExecute taint mid-run (its pods are evicted as a lost node's; the node "
               "itself stays up) via taint by kubernetes-admin at 2026-11-30T08:01:00Z")
    assert [t for t, _ in parts(trigger, ZH, _when)] == [
        "Pod 所在节点在运行中被加上 NoExecute 污点（其上的 Pod 像节点失联时一样被驱逐；节点本身仍在运行）；"
        "触发方式 节点污点，执行者 kubernetes-admin，时间 2026-11-30 16:01:00"]
