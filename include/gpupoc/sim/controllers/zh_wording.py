"""kube-scheduler's messages in Chinese, as a platform localized for Chinese users writes them (``zh-wording``).

The scheduling is kube-scheduler's; only the texts differ. Each English text is the framework's own
(``pkg/scheduler/framework/types.go`` FitError "0/%v nodes are available: %v.", the plugins' reasons
``Insufficient <resource>``, "Too many pods", "node(s) didn't match Pod's node affinity/selector", "node(s)
had untolerated taint", "node(s) were unschedulable", DefaultPreemption's "preemption: ...", "No preemption
victims found for incoming pod", "Preemption is not helpful for scheduling", "not eligible due to ...").
They are rendered with the terms of the Kubernetes glossary in Chinese (kubernetes/website
``content/zh-cn/docs/reference/glossary``: 节点, 亲和性, 污点, 容忍, 抢占; CC BY 4.0), keeping resource names and
numbers as they are, as localized consoles do. Under ``vague-reasons`` the localized scheduler says only
``VAGUE``.
"""

from __future__ import annotations

import re

VAGUE = "Pod 正在等待调度。"

# (English pattern, Chinese replacement), applied in order to the framework's text.
_RULES: list[tuple[re.Pattern, str]] = [(re.compile(p), r) for p, r in (
    (r"\.\.", "."),  # the FitError's period after the preemption note's own
    (r"preemption: ", "抢占："),
    (r"(\d+)/(\d+) nodes are available:?", r"\1/\2 个节点可用："),
    (r"(\d+) Insufficient ([\w/-]+(?:\.[\w/-]+)*)", r"\1 个节点的 \2 不足"),
    (r"(\d+) Too many pods", r"\1 个节点的 Pod 数已达上限"),
    (r"(\d+) node\(s\) didn't match Pod's node affinity/selector", r"\1 个节点与 Pod 的节点亲和性/节点选择器不匹配"),
    (r"(\d+) node\(s\) had untolerated taint", r"\1 个节点有 Pod 不容忍的污点"),
    (r"(\d+) node\(s\) were unschedulable", r"\1 个节点已封锁，不可调度"),
    (r"(\d+) No preemption victims found for incoming pod", r"\1 个节点上找不到可抢占的低优先级 Pod"),
    (r"(\d+) Preemption is not helpful for scheduling", r"\1 个节点上抢占无助于调度"),
    (r"not eligible due to preemptionPolicy=Never\.", "不符合抢占条件：preemptionPolicy=Never。"),
    (r"not eligible due to a terminating pod on the nominated node\.", "不符合抢占条件：提名节点上有正在终止的 Pod。"),
    (r", ", "，"),
    (r"\.(?:\s+|$)", "。"),
)]


def fit_error(english: str) -> str:
    """kube-scheduler's FitError (and its preemption note) in Chinese."""
    text = english
    for rx, replacement in _RULES:
        text = rx.sub(replacement, text)
    return text.replace("： ", "：").strip()


def scheduled(namespace: str, name: str, node: str) -> str:
    """The Scheduled event: "Successfully assigned ns/name to node"."""
    return f"已成功将 {namespace}/{name} 分配到节点 {node}"
