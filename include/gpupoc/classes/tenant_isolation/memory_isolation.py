"""Tenant isolation: GPU memory between two tenants on one physical card (ISO-11).

Where no node shares its cards the probe records that the case cannot arise and submits nothing. Otherwise,
once the wave (and the reclaim probe) ended, it puts the neighbour's pod on a shared card, the aggressor's beside
it on the same card (HAMi: ``nvidia.com/use-gpuuuid``; time-slicing and MPS: the same node, the one with the
most free GPU devices; where the device plugin puts a pod on another card of it, as its distributed allocation
of replicas does, that pod stays to hold its replica and another is tried), lets the aggressor
allocate past its slice, then lets the neighbour's tenant allocate within its own slice. Each pod runs the
workload program's ``gpumem`` mode; the verdict and the row are ``gpupoc.classes.tenant_isolation.memory_judge``'s. The row
goes to ``files/memory_isolation.json``, the collector writes ``memory_isolation``; the pods are deleted.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import secrets
import time
from dataclasses import asdict

from gpupoc.common.timefmt import parse_time, rfc3339, utcnow
from gpupoc.classes.tenant_isolation import memory_judge as M
from gpupoc.steps.probes.common import monitoring_sources, probe_manifest, wait_for_release, waiting
from gpupoc.steps.wave_end import WaveEnd

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext

MEMORY_FILE = "memory_isolation"
STAGE_SECONDS = 120.0   # how long each pod may take to be placed and allocate
POLL_SECONDS = 1.0
SOURCE = "kubernetes-api (tenant tokens): the probe pods' state and logs"


def list_nodes(ctx: RunContext) -> list[dict] | None:
    r = ctx.reader().call("GET", "/api/v1/nodes")
    return ((r.body or {}).get("items") or []) if r.ok else None


def _save(ctx: RunContext, row) -> None:
    d = asdict(row)
    d["observed_at"] = rfc3339(row.observed_at) if row.observed_at else None
    ctx.writer.write_json(MEMORY_FILE, d)


def await_turn(ctx: RunContext) -> None:
    """Until every wave item is decided and the reclaim probe (when the plan has one) has its answer and its
    pods are gone: the card to itself."""
    from gpupoc.classes.tenant_isolation.reclaim import RECLAIM_FILE

    budget = ctx.spec.gate_timeout_seconds + ctx.hold_timeout_s()
    wait_for_release(ctx, ctx.spec.gate_timeout_seconds)
    with waiting(ctx, "the wave's end (and the reclaim probe's) before the memory-isolation probe", budget):
        deadline, end = time.monotonic() + budget, WaveEnd()
        while time.monotonic() < deadline and not (
                end.over(ctx) and (ctx.spec.reclaim is None or ctx.files(RECLAIM_FILE).is_file())
                and not other_probe_pods(ctx)):
            time.sleep(2.0)


def other_probe_pods(ctx: RunContext) -> list[str]:
    """The run's pods that are no wave item's and still hold their GPUs (the reclaim probe's, being deleted)."""
    from gpupoc.pipeline import wave as W

    items = {i["workload_key"] for i in ctx.items}
    return [p["metadata"]["name"] for p in W.list_pods(ctx.reader(), ctx.namespaces, ctx.selector)
            if W.item_key(p) not in items and (p.get("status") or {}).get("phase") not in W.TERMINAL]


def free_devices(ctx: RunContext, node: dict) -> int:
    """``nvidia.com/gpu`` allocatable on ``node`` less what its unfinished pods ask (0 when unreadable)."""
    name = (node.get("metadata") or {}).get("name", "")
    r = ctx.reader().call("GET", f"/api/v1/pods?fieldSelector=spec.nodeName%3D{name}")
    if not r.ok:
        return 0
    held = sum(M.gpus_asked(p) for p in (r.body or {}).get("items") or []
               if (p.get("status") or {}).get("phase") not in ("Succeeded", "Failed"))
    return M.allocatable_gpus(node) - held


def choose(ctx: RunContext, shared: list[tuple[dict, str]]):
    """(node, sharing, workload) for the shared node (the one with the most free GPU devices of its kind)
    whose pool has a 1-GPU workload of the workload program, or None."""
    free = {id(n): free_devices(ctx, n) for n, _ in shared}
    for node, sharing in sorted(shared, key=lambda ns: -free[id(ns[0])]):
        labels = (node.get("metadata") or {}).get("labels") or {}
        for w in ctx.plan.workloads:
            pool = next((p for p in ctx.plan.pools if p.name == w.pool), None)
            if pool and w.gpus >= 1 and "--mode" in w.args and all(labels.get(k) == v
                                                                   for k, v in pool.node_selector.items()):
                return node, sharing, w
    return None


class Pods:
    """The probe's pods: submitted with their tenant's own token, read (state and log) as the observer reads."""

    def __init__(self, ctx: RunContext, workload, node: str, sharing: str, sizes: M.Sizes):
        self.ctx, self.workload, self.node, self.sharing, self.sizes = ctx, workload, node, sharing, sizes
        self.made: list[dict] = []
        self.duration = 3 * STAGE_SECONDS + 60

    def submit(self, tenant: str, role: str, mib: int, uuid: str | None = None) -> str:
        t = self.ctx.plan.tenant(tenant)
        name = f"ti-gpumem-{role}-{secrets.token_hex(3)}"
        base = probe_manifest(self.ctx, self.workload.name, t.name, name, role=f"gpumem-{role}")
        body = M.gpumem_pod(base, mib=mib, duration_s=self.duration, slice_mib=self.sizes.slice_mib,
                            sharing=self.sharing, node=self.node, uuid=uuid)
        r = self.ctx.tenant(t.name, f"memory isolation probe: the {role}'s pod").call(
            "POST", f"/api/v1/namespaces/{t.namespace}/pods", body=body)
        if r.ok:
            self.made.append({"metadata": {"namespace": t.namespace, "name": name}})
        return name if r.ok else ""

    def on_card(self, tenant: str, role: str, mib: int, uuid: str | None, tries: int,
                what: str) -> tuple[str, M.PodView]:
        """A ``role`` pod on the card ``uuid`` (none without one): one the device plugin put on another card stays,
        holding that device, and another is submitted, ``tries`` at most."""
        name, seen = "", M.PodView(tenant, "", mib)
        for _ in range(tries if uuid else 0):
            name = self.submit(tenant, role, mib, uuid)
            seen = self.settled(tenant, name, mib, what)
            if not name or seen.report.uuid in (None, uuid):
                break
        return name, seen

    def view(self, tenant: str, name: str, mib: int) -> M.PodView:
        t = self.ctx.plan.tenant(tenant)
        if not name:
            return M.PodView(tenant, "", mib)
        caller = self.ctx.reader()
        r = caller.call("GET", f"/api/v1/namespaces/{t.namespace}/pods/{name}")
        log = caller.call("GET", f"/api/v1/namespaces/{t.namespace}/pods/{name}/log")
        return M.pod_view(tenant, r.body if r.ok else None, mib, log.text if log.ok else "")

    def settled(self, tenant: str, name: str, mib: int, what: str) -> M.PodView:
        """The pod once it holds what it asked for or ended (or after STAGE_SECONDS)."""
        deadline, seen = time.monotonic() + STAGE_SECONDS, self.view(tenant, name, mib)
        with waiting(self.ctx, what, STAGE_SECONDS):
            while name and time.monotonic() < deadline:
                if seen.report.holding_mib is not None or seen.phase in ("Failed", "Succeeded"):
                    break
                time.sleep(POLL_SECONDS)
                seen = self.view(tenant, name, mib)
        return seen

    def delete(self) -> None:
        from gpupoc.pipeline import wave as W

        W.delete_pods(self.ctx.admin("memory isolation probe: delete its pods"), self.made)


def _metrics(ctx: RunContext, sharing: str, namespace: str, pod: str, uuid: str | None) -> dict:
    """The neighbour's utilization (and, under HAMi, memory) from Prometheus; empty without a source."""
    src = monitoring_sources(ctx)
    if src is None or not src.prometheus:
        return {}
    sel = f'namespace="{namespace}",pod="{pod}"'
    exprs = ({"util": f"hami_container_device_utilization_ratio{{{sel}}}",
              "mem": f"hami_vgpu_memory_used_bytes{{{sel}}} / 1048576"} if sharing == "hami"
             else {"util": f'DCGM_FI_DEV_GPU_UTIL{{UUID="{uuid}"}}'})
    out = {}
    try:
        prom = src.prometheus_client()
        for key, expr in exprs.items():
            res = prom.query(expr)
            if res:
                out[key] = float(res[0]["value"][1])
    except Exception:  # noqa: BLE001 - no metrics: the pods' own reports stand alone
        return {}
    if out:
        out["source"] = "prometheus " + ", ".join(e.split("{")[0] for e in exprs.values())
    return out


def memory_isolation_probe(ctx: RunContext) -> dict:
    """Two tenants on one card, the aggressor past its slice: who failed, and whether the neighbour noticed."""
    nodes = list_nodes(ctx)
    if nodes is None:
        return {"error": "the nodes could not be listed"}
    shared = M.shared_nodes(nodes)
    if not shared:
        _save(ctx, M.not_shared_row(M.cluster_sharing(nodes), utcnow()))
        return {"shared_gpu": False}
    chosen = choose(ctx, shared)
    if chosen is None or len(ctx.plan.tenants) < 2:
        row = M.MemoryIsolationRow(sharing=M.cluster_sharing(nodes), shared_gpu=True, observed_at=utcnow(),
                                   reason="the plan needs two tenants and a 1-GPU workload of the workload program "
                                          "(args with --mode) on a pool whose nodes share their GPUs")
        _save(ctx, row)
        return {"shared_gpu": True, "isolated": None}
    await_turn(ctx)
    node, sharing, workload = chosen
    row = _provoke(ctx, node, sharing, workload)
    _save(ctx, row)
    return {"shared_gpu": True, "isolated": row.isolated, "sharing": sharing, "node": row.node}


def _provoke(ctx: RunContext, node: dict, sharing: str, workload):
    labels = (node.get("metadata") or {}).get("labels") or {}
    card = M.card_memory_mib(node) or 0
    sz = M.sizes(card, sharing, int(labels.get("nvidia.com/gpu.replicas", "0") or 0))
    name = node["metadata"]["name"]
    pods = Pods(ctx, workload, name, sharing, sz)
    neighbour_t, aggressor_t = ctx.plan.tenants[0], ctx.plan.tenants[1]
    try:
        n = pods.submit(neighbour_t.name, "neighbour", sz.neighbour_mib)
        before = pods.settled(neighbour_t.name, n, sz.neighbour_mib, f"{neighbour_t.name}'s pod to hold its memory")
        uuid = before.report.uuid
        m0 = _metrics(ctx, sharing, neighbour_t.namespace, n, uuid) if uuid else {}
        tries = max(1, M.allocatable_gpus(node))
        a, aggressor = pods.on_card(aggressor_t.name, "aggressor", sz.aggressor_mib, uuid, tries,
                                    f"{aggressor_t.name}'s pod to allocate past its slice")
        late_name, late = pods.on_card(neighbour_t.name, "late", sz.late_mib, uuid if a else None, tries,
                                       f"{neighbour_t.name}'s second allocation")
        after = pods.view(neighbour_t.name, n, sz.neighbour_mib)
        m1 = _metrics(ctx, sharing, neighbour_t.namespace, n, uuid) if uuid else {}
    finally:
        pods.delete()
    return M.judge(M.Observed(
        sharing=sharing, node=name, card_mib=card or None, sizes=sz, neighbour_before=before, neighbour_after=after,
        aggressor=aggressor, late=late, util_before=m0.get("util"), util_after=m1.get("util"),
        mem_before=m0.get("mem"), mem_after=m1.get("mem"),
        memory_source=m0.get("source") if "mem" in m0 else "pod logs (workload program)",
        utilization_source=m0.get("source") if "util" in m0 else None, at=utcnow()))


def write_memory_isolation(ctx: RunContext) -> dict:
    """``memory_isolation`` from the probe's row (not verified when the probe recorded none)."""
    row = ctx.read_file(MEMORY_FILE)
    if not row:
        ctx.writer.mark_not_verified("memory_isolation", "the memory_isolation_probe task recorded no result; see "
                                     "its log", "kubernetes-api")
        return {"memory_isolated": None}
    row = {**row, "observed_at": parse_time(row.get("observed_at"))}
    ctx.writer.write("memory_isolation", [row], source=SOURCE)
    return {"memory_isolated": row.get("isolated"), "gpu_sharing": row.get("sharing")}
