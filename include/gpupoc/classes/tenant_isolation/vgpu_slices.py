"""Tenant isolation: two tenants' vGPU slices of one card that do not fit together (ISO-12, ISO-13).

Where no node slices its cards' memory (no HAMi registration) the probe records that the case cannot arise and
submits nothing. Otherwise, once the wave (and the reclaim probe) ended, it puts the plan's first tenant's pod on
a node's card, asking ``SHARE`` of the card's memory for ``HOLD_SECONDS``; once it runs, the second tenant's pod
asks as much of the same card (``nvidia.com/use-gpuuuid``). It reads every card's grants when the scheduler
answers the second pod, then waits for the first to end and the second to be placed. The node is another one than
the memory-isolation probe's when there is one (both run beside each other); otherwise it waits for that probe's
answer first. The verdict and the row are ``gpupoc.classes.tenant_isolation.vgpu_judge``'; the row goes to
``files/vgpu_slices.json``, the collector writes ``vgpu_slices``; the pods are deleted.
"""

from __future__ import annotations

import secrets
import time
from dataclasses import asdict
from typing import TYPE_CHECKING, Callable

from gpupoc.common.timefmt import parse_time, rfc3339, utcnow
from gpupoc.classes.tenant_isolation import memory_judge as M
from gpupoc.classes.tenant_isolation import vgpu_judge as V
from gpupoc.steps.probes.common import probe_manifest, waiting
from gpupoc.classes.tenant_isolation.memory_isolation import MEMORY_FILE, await_turn, choose, list_nodes

if TYPE_CHECKING:
    from gpupoc.steps.context import RunContext

SLICES_FILE = "vgpu_slices"
HOLD_SECONDS = 45.0      # the first pod holds its slice this long, then ends by itself
STAGE_SECONDS = 120.0    # how long a pod may take to be placed, or the scheduler to answer
MARGIN_SECONDS = 15.0    # watched past max_slice_release_seconds before a slice counts as kept
POLL_SECONDS = 1.0
SOURCE = "kubernetes-api: the probe pods' grants (hami.io/vgpu-devices-allocated), the nodes' registration"
DATE_FIELDS = ("observed_at", "first_finished_at", "second_placed_at")


def _save(ctx: RunContext, row) -> None:
    d = asdict(row)
    for k in DATE_FIELDS:
        d[k] = rfc3339(d[k]) if d[k] else None
    ctx.writer.write_json(SLICES_FILE, d)


class SlicePods:
    """The probe's pods: submitted with their tenant's own token, read back as the observer reads."""

    def __init__(self, ctx: RunContext, workload, node: str):
        self.ctx, self.workload, self.node = ctx, workload, node
        self.made: list[dict] = []

    def submit(self, tenant: str, role: str, slice_mib: int, hold_s: float, uuid: str | None = None) -> str:
        t = self.ctx.plan.tenant(tenant)
        name = f"ti-vgpu-{role}-{secrets.token_hex(3)}"
        base = probe_manifest(self.ctx, self.workload.name, t.name, name, role=f"vgpu-{role}")
        body = M.gpumem_pod(base, mib=M.STEP_MIB, duration_s=hold_s, slice_mib=slice_mib, sharing="hami",
                            node=self.node, uuid=uuid)
        r = self.ctx.tenant(t.name, f"vGPU slices probe: the {role} slice's pod").call(
            "POST", f"/api/v1/namespaces/{t.namespace}/pods", body=body)
        if r.ok:
            self.made.append({"metadata": {"namespace": t.namespace, "name": name}})
        return name if r.ok else ""

    def view(self, tenant: str, name: str, mib: int) -> V.SlicePod:
        if not name:
            return V.SlicePod(tenant, "", mib)
        ns = self.ctx.plan.tenant(tenant).namespace
        r = self.ctx.reader().call("GET", f"/api/v1/namespaces/{ns}/pods/{name}")
        return V.slice_pod(tenant, r.body if r.ok and r.status != 404 else None, mib)

    def until(self, tenant: str, name: str, mib: int, done: Callable[[V.SlicePod], bool], what: str,
              seconds: float) -> V.SlicePod:
        """The pod once ``done`` holds, it ended, or ``seconds`` passed."""
        seen = self.view(tenant, name, mib)
        with waiting(self.ctx, what, seconds):
            deadline = time.monotonic() + seconds
            while name and not done(seen) and time.monotonic() < deadline:
                time.sleep(POLL_SECONDS)
                seen = self.view(tenant, name, mib)
        return seen

    def delete(self) -> None:
        from gpupoc.pipeline import wave as W

        W.delete_pods(self.ctx.admin("vGPU slices probe: delete its pods"), self.made)


def _pick(ctx: RunContext, nodes: list[dict]):
    """(node, workload) on a sliced node other than the memory-isolation probe's, if any; and whether it is
    that probe's node."""
    theirs = choose(ctx, M.shared_nodes(nodes))
    options = [c for c in (choose(ctx, [(n, "hami")]) for n in V.sliced_nodes(nodes)) if c is not None]
    if not options:
        return None, False
    other = [c for c in options if theirs is None or c[0]["metadata"]["name"] != theirs[0]["metadata"]["name"]]
    node, _, workload = (other or options)[0]
    return (node, workload), not other and theirs is not None


def vgpu_slices_probe(ctx: RunContext) -> dict:
    """Two tenants' slices that do not fit on one card together: whether the second waits for the first, and
    whether it gets the card once the first ended."""
    nodes = list_nodes(ctx)
    if nodes is None:
        return {"error": "the nodes could not be listed"}
    if not V.sliced_nodes(nodes):
        _save(ctx, V.not_sliced_row(M.cluster_sharing(nodes), utcnow()))
        return {"memory_slices": False}
    chosen, shared = _pick(ctx, nodes)
    if chosen is None or len(ctx.plan.tenants) < 2:
        _save(ctx, V.VgpuSliceRow(sharing="hami", memory_slices=True, observed_at=utcnow(),
                                  reason="the plan needs two tenants and a 1-GPU workload of the workload program "
                                         "(args with --mode) on a pool whose nodes HAMi slices"))
        return {"memory_slices": True, "overcommitted": None}
    await_turn(ctx)
    if shared:
        with waiting(ctx, "the memory-isolation probe's answer (the same node)", 6 * STAGE_SECONDS):
            deadline = time.monotonic() + 6 * STAGE_SECONDS
            while not ctx.files(MEMORY_FILE).is_file() and time.monotonic() < deadline:
                time.sleep(2.0)
    row = _provoke(ctx, *chosen)
    _save(ctx, row)
    return {"memory_slices": True, "overcommitted": row.overcommitted, "slice_released": row.slice_released,
            "slice_release_seconds": row.slice_release_seconds}


def _cluster(ctx: RunContext) -> tuple[list[dict], list[dict]]:
    reader = ctx.reader()
    pods, nodes = reader.call("GET", "/api/v1/pods"), reader.call("GET", "/api/v1/nodes")
    return ((pods.body or {}).get("items") or [] if pods.ok else []), ((nodes.body or {}).get("items") or []
                                                                       if nodes.ok else [])


def _provoke(ctx: RunContext, node: dict, workload) -> V.VgpuSliceRow:
    name = node["metadata"]["name"]
    card = M.card_memory_mib(node) or 0
    ask = int(card * V.SHARE)
    first_t, second_t = ctx.plan.tenants[0].name, ctx.plan.tenants[1].name
    limit = float(ctx.spec.thresholds.max_slice_release_seconds)
    pods = SlicePods(ctx, workload, name)
    try:
        a = pods.submit(first_t, "first", ask, HOLD_SECONDS)
        first = pods.until(first_t, a, ask, lambda p: (p.phase == "Running" and p.placed) or p.ended, f"{first_t}'s slice to "
                           "run", STAGE_SECONDS)
        b = pods.submit(second_t, "second", ask, 5.0, first.uuid) if first.placed and not first.ended else ""
        second = pods.until(second_t, b, ask, lambda p: p.placed or bool(p.waiting),
                            f"the scheduler's answer to {second_t}'s slice of the same card", STAGE_SECONDS)
        first_then = pods.view(first_t, a, ask)
        allocations = V.card_allocations(*_cluster(ctx))
        first_end = pods.until(first_t, a, ask, lambda p: p.ended, f"{first_t}'s slice to end",
                               HOLD_SECONDS + STAGE_SECONDS)
        second_end = second if second.placed or not b else pods.until(
            second_t, b, ask, lambda p: p.placed, f"{second_t}'s slice to be placed once {first_t}'s ended",
            limit + MARGIN_SECONDS)
    finally:
        pods.delete()
    return V.judge(V.Observed(node=name, card_mib=card or None, first=first_then if first_then.placed else first,
                              second=second, allocations=allocations, first_end=first_end, second_end=second_end,
                              max_release_seconds=limit, at=utcnow()))


def write_vgpu_slices(ctx: RunContext) -> dict:
    """``vgpu_slices`` from the probe's row (not verified when the probe recorded none)."""
    row = ctx.read_file(SLICES_FILE)
    if not row:
        ctx.writer.mark_not_verified("vgpu_slices", "the vgpu_slices_probe task recorded no result; see its log",
                                     "kubernetes-api")
        return {"overcommitted": None}
    row = {**row, **{k: parse_time(row.get(k)) for k in DATE_FIELDS}}
    ctx.writer.write("vgpu_slices", [row], source=SOURCE)
    return {"overcommitted": row.get("overcommitted"), "slice_released": row.get("slice_released")}
