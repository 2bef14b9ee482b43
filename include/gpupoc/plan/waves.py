"""Expand a test class into the pods it submits, each with a stable name (mapped tasks expand over these)."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from gpupoc.plan.classes import TestClass, WaveEntry
from gpupoc.plan.overrides import ReplayOverride

PREFIX = {
    TestClass.QUEUE_CONGESTION: "qc",
    TestClass.TENANT_ISOLATION: "ti",
    TestClass.UTILIZATION: "ut",
    TestClass.FAULT_RECOVERY: "fr",
    TestClass.AUDIT_TRAIL: "at",
}
# KubernetesPodOperator appends "-" and 8 characters; pod names are at most 63 characters.
MAX_ITEM_NAME = 63 - 9


@dataclass(frozen=True)
class WaveItem:
    """One pod a test class submits. ``role`` says why: wave, over_quota, injection:<kind>, artifact-<side>.

    A workload of several ``replicas`` gives one item per replica, all naming the same ``gang`` (a key unique
    in the class); ``min_available`` of them must run together."""

    test_class: str
    index: int
    name: str
    workload: str
    tenant: str
    priority_class: str
    role: str = "wave"
    scenario: str | None = None
    gang: str | None = None
    replica: int = 0
    replicas: int = 1
    min_available: int = 1
    replay: ReplayOverride | None = None  # a pod of a replayed history job (``gpupoc.plan.overrides``)

    def to_dict(self) -> dict:
        return asdict(self)


def class_items(plan, tc: TestClass | str) -> list[WaveItem]:
    """Every pod of the class in submission order; names are unique within the class and stable across runs."""
    tc = TestClass(tc)
    spec = plan.test_class(tc)
    if getattr(spec, "replay", None) is not None:
        return _replay_items(plan, tc, spec.replay.template)
    raw: list[tuple[WaveEntry, str, str | None]] = []
    for entry in spec.wave:
        raw += [(entry, "wave", None)] * entry.count
    if tc is TestClass.TENANT_ISOLATION:
        for oq in spec.over_quota:
            raw += [(WaveEntry(workload=oq.workload, tenant=oq.tenant), "over_quota", "over-quota")] * oq.count
    if tc is TestClass.FAULT_RECOVERY:
        for inj in spec.injections:
            raw.append((WaveEntry(workload=inj.workload, tenant=inj.tenant), f"injection:{inj.kind}",
                        inj.name or inj.kind.replace("_", "-")))
    if tc is TestClass.AUDIT_TRAIL and spec.artifact is not None:
        raw.append((spec.artifact.producer, "artifact-producer", "artifact"))
        raw.append((spec.artifact.consumer, "artifact-consumer", "artifact"))
    items: list[WaveItem] = []
    for entry, role, scenario in raw:
        workload = plan.workload(entry.workload)
        first = len(items)
        gang = gang_key(tc, entry.workload, first) if workload.is_gang else None
        for replica in range(workload.replicas):
            i = len(items)
            items.append(WaveItem(
                test_class=tc.value,
                index=i,
                name=item_name(tc, entry.workload, i),
                workload=entry.workload,
                tenant=entry.tenant,
                priority_class=entry.priority_class or workload.priority_class,
                role=role,
                scenario=scenario,
                gang=gang,
                replica=replica,
                replicas=workload.replicas,
                min_available=workload.gang_size,
            ))
    return items


def _replay_items(plan, tc: TestClass, template: str) -> list[WaveItem]:
    """One item per pod of each replayed job, in arrival order. A job of several nodes is a gang, as a
    workload of several replicas is: all its pods must run together (a distributed job starts when every rank
    runs), submitted through the adapter's grouping and judged by the gang checks."""
    from gpupoc.plan.replay import replay_pods

    items: list[WaveItem] = []
    first_of_job: dict[int, int] = {}
    for i, p in enumerate(replay_pods(plan, tc)):
        job = p.override
        first = first_of_job.setdefault(job.job_index, i)
        gang = gang_key(tc, template, first) if job.replicas > 1 else None
        items.append(WaveItem(test_class=tc.value, index=i, name=item_name(tc, template, i), workload=template,
                              tenant=p.tenant, priority_class=p.priority_class, gang=gang, replica=job.replica,
                              replicas=job.replicas, min_available=job.replicas, replay=job))
    return items


def item_name(tc: TestClass | str, workload: str, index: int) -> str:
    """``qc-train-8g-007``: class prefix, workload name, index in the class."""
    return f"{PREFIX[TestClass(tc)]}-{workload}-{index:03d}"


def gang_key(tc: TestClass | str, workload: str, first_index: int) -> str:
    """``qc-train-2x8g-g004``: the gang whose first replica is item ``first_index`` of the class."""
    return f"{PREFIX[TestClass(tc)]}-{workload}-g{first_index:03d}"


def gang_items(plan, tc: TestClass | str, gang: str) -> list[WaveItem]:
    """The replicas of one gang, in order."""
    return [i for i in class_items(plan, tc) if i.gang == gang]


def find_item(plan, tc: TestClass | str, key: str) -> WaveItem:
    """The item named ``key`` of the class; ConfigError naming the known keys otherwise."""
    from gpupoc.exceptions import ConfigError

    items = class_items(plan, tc)
    for item in items:
        if item.name == key:
            return item
    known = ", ".join(i.name for i in items[:10]) + (" ..." if len(items) > 10 else "")
    raise ConfigError(f"test_classes.{TestClass(tc).value}", [
        f"workload_key: no wave item {key!r} in this plan (known: {known}); the plan changed after the wave "
        "was prepared: rerun the run from prepare_wave"])
