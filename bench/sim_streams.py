"""Benchmark: how long the simulated API server takes to fan one change out to many open streams.

Every KubernetesPodOperator task of a wave holds a watch or a followed log on the API server. Serves a
bootstrapped cluster in this process (no controllers), opens --watches watches on a namespace's configmaps and
--follows followed logs of one running pod, then creates one configmap and ends the pod's log. Prints the
time until every watch has its event and every follow has closed, median of --repeat.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path


def _state(data_dir: Path):
    from gpupoc.sim.bootstrap import bootstrap
    from gpupoc.sim.cluster import ClusterState, make_identities
    from gpupoc.sim.config import load_cluster_config
    from gpupoc.sim.store import Store

    state = ClusterState(config=load_cluster_config(), data_dir=data_dir, store=Store(history=50_000))
    state.identities = make_identities(state.config)
    bootstrap(state)
    state.store.create("pods", {
        "metadata": {"name": "p", "namespace": "team-vision"},
        "spec": {"nodeName": "training-node-1", "containers": [{"name": "base", "image": "x"}]},
        "status": {"phase": "Running", "containerStatuses": [{"name": "base", "ready": True, "restartCount": 0,
                                                              "image": "x", "imageID": "", "state": {"running": {}}}]}})
    return state, {"Authorization": f"Bearer {state.identity_for_context('admin')[0]}"}


async def fan_out(data_dir: Path, watches: int, follows: int) -> float:
    import aiohttp

    from gpupoc.sim.server import start_server

    state, headers = _state(data_dir)
    log = state.logs.get("team-vision", "p", "base", create=True)
    log.append("hello")
    server = await start_server(state, run_controllers=False)
    try:
        async with aiohttp.ClientSession(headers=headers, connector=aiohttp.TCPConnector(limit=0)) as s:
            rv = str(state.store.rv)

            async def one_watch():
                url = f"{server.url}/api/v1/namespaces/team-nlp/configmaps?watch=true&resourceVersion={rv}"
                async with s.get(url, params={"timeoutSeconds": "3600"}) as r:
                    return await r.content.readline()

            async def one_follow():
                async with s.get(f"{server.url}/api/v1/namespaces/team-vision/pods/p/log?follow=True") as r:
                    return await r.text()

            tasks = [asyncio.create_task(one_watch()) for _ in range(watches)]
            tasks += [asyncio.create_task(one_follow()) for _ in range(follows)]
            while state.store.watch_count < watches:
                await asyncio.sleep(0.05)
            t0 = time.perf_counter()
            state.store.create("configmaps", {"metadata": {"name": "ping", "namespace": "team-nlp"}})
            log.append("bye")
            pod = state.store.get("pods", "team-vision", "p")
            pod["status"]["containerStatuses"][0]["state"] = {"terminated": {"exitCode": 0, "reason": "Completed"}}
            pod["status"]["phase"] = "Succeeded"
            state.store.update("pods", pod)
            log.close()
            await asyncio.gather(*tasks)
            return time.perf_counter() - t0
    finally:
        await server.stop()


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--watches", type=int, default=300)
    ap.add_argument("--follows", type=int, default=100)
    ap.add_argument("--repeat", type=int, default=3)
    args = ap.parse_args(argv)
    times = []
    for i in range(args.repeat):
        with tempfile.TemporaryDirectory(prefix="gpupoc-bench-streams-") as tmp:
            times.append(asyncio.run(fan_out(Path(tmp), args.watches, args.follows)))
    print(f"one change to {args.watches} watches and the end of a log to {args.follows} follows: "
          f"{statistics.median(times):.2f} s (median of {args.repeat}; runs {', '.join(f'{t:.2f}' for t in times)})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
