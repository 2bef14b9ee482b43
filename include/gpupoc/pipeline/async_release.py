"""Lifting the pipeline's gate of a large wave: every pod's PATCH sent through the async client, many in flight.

The per-pod release (``wave.release_wave``) patches from a few threads of the sync client: some 100 pods a
second on 2 cores, so the gates of 10,000 pods come off over minutes and the platform sees a trickle, not a
wave. Here up to ``in_flight`` patches are on the wire at once (``kubernetes_asyncio``, as the bulk shards
send their creations, at the wave's rate), so the release takes as long as the API server needs to write them. Each answer goes to
``on_answer`` (the task's ledger: every action the pipeline takes is recorded).
"""

from __future__ import annotations

import asyncio
from datetime import datetime
from typing import Callable

from gpupoc.common.timefmt import utcnow
from gpupoc.pipeline.async_kube import AsyncKubeClient
from gpupoc.pipeline.bulk_rate import Answer, Throttling, TokenBucket, send
from gpupoc.pipeline.k8s import METADATA_ONLY, Response
from gpupoc.pipeline.wave import STRATEGIC, Patch, patch_body

IN_FLIGHT = 64
OnAnswer = Callable[[str, Answer, datetime], None]  # the pod's path, its answer, when the request was sent


async def _lift_all(client: AsyncKubeClient, pods: list[dict], patch: Patch, in_flight: int,
                    on_answer: OnAnswer, bucket: TokenBucket) -> list[tuple[dict, Response]]:
    gate, stats = asyncio.Semaphore(in_flight), Throttling()

    async def lift(p: dict) -> tuple[dict, Response]:
        m = p["metadata"]
        path = f"/api/v1/namespaces/{m['namespace']}/pods/{m['name']}"
        async with gate:
            started = utcnow()
            answer = await send(bucket, lambda: client.request(
                "PATCH", path, body=patch_body(patch, p), content_type=STRATEGIC, success_body=False,
                accept=METADATA_ONLY), stats,
                endpoint=f"PATCH {path} (context {client.context})")
        on_answer(path, answer, started)
        return p, Response(answer.status, answer.body)

    return list(await asyncio.gather(*(lift(p) for p in pods)))


def lift_gates(kubeconfig: str | None, context: str, pods: list[dict], patch: Patch, qps: float, burst: int,
               on_answer: OnAnswer = lambda path, answer, started: None,
               in_flight: int = IN_FLIGHT, component: str = "submitter") -> list[tuple[dict, Response]]:
    """PATCH ``patch`` onto every pod as ``context``, up to ``in_flight`` at once at ``qps`` after a ``burst``;
    each pod with its answer. A callable ``patch`` builds each pod's body as it is sent (each retry anew). A 429 or 503 (or another 5xx with ``Retry-After``), and a patch
    without an answer, is sent again under the retry policy, as the bulk shards' requests are (``bulk_rate.send``).
    Each asks for the pod's metadata only, and its User-Agent names ``component``."""

    async def run() -> list[tuple[dict, Response]]:
        client = await AsyncKubeClient.from_kubeconfig(kubeconfig, context, component)
        try:
            return await _lift_all(client, pods, patch, in_flight, on_answer, TokenBucket(qps, burst))
        finally:
            await client.close()

    return asyncio.run(run())
