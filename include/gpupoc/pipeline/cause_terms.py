"""The names of the things a wait can be blamed on, in English and Chinese: what ``readable`` looks for.

These are names of things, never of states. A resource is named by its API name (``nvidia.com/gpu``), its last
segment and the nouns a scheduler or a console uses for it ("GPUs", "Card", 显卡, 显存); a placement
constraint by the API's kinds (selector, affinity, taint, toleration); priority and preemption by their own
words. No word for a state (pending, waiting, queued, not ready, 调度中, 排队中, 等待) is here, so a message made
only of states names nothing, whatever its language.

Sources of the words: kube-scheduler's fit errors (``pkg/scheduler/framework/plugins``: ``Insufficient <name>``,
``Too many pods``, "didn't match Pod's node affinity/selector", "had untolerated taint", "were
unschedulable"), HAMi's filter reasons (``pkg/device/common/common.go``: ``CardInsufficientMemory``,
``NodeInsufficientDevice``, ``CardInsufficientCore``, ``ResourceQuotaNotFit``, in ``pkg/scheduler/score.go``'s
"%d nodes %s(%s)"), KAI's "node(s) didn't have enough resources: GPUs",
and the Kubernetes glossary in Chinese (kubernetes/website ``content/zh-cn/docs/reference/glossary``:
污点 taint, 容忍度 toleration, 亲和性 affinity, 节点选择器 nodeSelector, 抢占 preemption, 优先级 priority;
CC BY 4.0).
"""

from __future__ import annotations

import re

# Nouns for a kind of resource, by a keyword of the resource's name (``nvidia.com/gpumem`` -> "mem").
RESOURCE_NOUNS: dict[str, tuple[str, ...]] = {
    "gpu": ("gpu", "gpus", "vgpu", "card", "cards", "device", "devices", "显卡", "加速卡", "GPU 卡", "算力卡"),
    "mem": ("memory", "mem", "gpu memory", "内存", "显存"),
    "core": ("core", "cores", "compute", "算力", "核心"),
    "cpu": ("cpu", "cpus", "vcpu", "处理器"),
    "storage": ("storage", "ephemeral-storage", "disk", "存储", "磁盘"),
    "pods": ("too many pods", "max pods", "pods per node", "pod 数", "pod数"),
}
# Which nouns a resource's name takes: the first keyword its last segment holds ("gpumem" -> "mem", not "gpu").
RESOURCE_KEYWORDS = ("mem", "core", "gpu", "cpu", "storage", "pods")

# The API's kinds of placement constraint and the words kube-scheduler's filters use for them.
PLACEMENT_WORDS = ("selector", "nodeselector", "affinity", "anti-affinity", "taint", "taints", "untolerated",
                   "toleration", "tolerations", "node(s) were unschedulable", "cordoned",
                   "节点选择器", "亲和性", "反亲和性", "污点", "容忍", "封锁")

# A quota is named by its kind as well as by name: a pod's namespace answers to its quotas ("ResourceQuotaNotFit").
QUOTA_WORDS = ("quota", "quotas", "resourcequota", "配额", "限额")

PRIORITY_WORDS = ("priority", "preempt", "preempted", "preempting", "preemption", "preemptible",
                  "non-preemptible", "reclaim", "reclaimed", "优先级", "抢占", "回收")

# A number as a place in the queue: "position 3", "3 workloads ahead", "#2 in queue", 第 3 位, 前面还有 3 个.
POSITION = re.compile(
    r"position(?:\s+in\s+\S+(?:\s+\S+)?)?\s*(?:is|of|:|#)?\s*\d+|\d+\s+(?:\S+\s+){0,2}ahead\b|#\d+\s+in\b|"
    r"第\s*\d+\s*(?:位|名)|排(?:在|第)\s*第?\s*\d+|前面?(?:还)?有\s*\d+|之前(?:还)?有\s*\d+", re.I)

# A number that counts nodes ("0/3 nodes", "3 node(s)", 3 个节点): never a cause by itself.
NODE_COUNT = re.compile(r"\d+(?=\s*(?:nodes?\b|node\(s\)|个?\s*节点))", re.I)
# A number on its own: not part of a name ("node-3", "a100"), a version or a decimal ("1.5").
NUMBER = re.compile(r"(?<![A-Za-z0-9_-])(?<![A-Za-z0-9_]\.)\d+(?!\.?[A-Za-z0-9_])")
# A number given as the pod group's own size: "4 minAvailable" (Volcano's job fit error), "min: 4", "minMember 4".
GROUP_SIZE = re.compile(r"(\d+)\s*min\s*available\b|\bmin\s*(?:member|available)?\s*[:=]?\s*(\d+)", re.I)
