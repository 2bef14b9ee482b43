"""controlplane/exporter: the two exporters' text from the API server's listings (a fake caller here), one listing
per scrape, and a failed listing or a wrong kubeconfig answered with the endpoint and the fix."""

from __future__ import annotations

import urllib.error
import urllib.request
from http.server import ThreadingHTTPServer
from threading import Thread

import pytest

from gpupoc.controlplane import exporter as E
from gpupoc.controlplane.nodes import node_object
from gpupoc.exceptions import SourceUnavailable
from gpupoc.pipeline.k8s import Response
from gpupoc.plan import DEFAULT_PLAN, load_plan
from tests.exposition import parse_exposition, series
from tests.unit.controlplane.test_exporter_gpus import pod

NODE = node_object(load_plan(DEFAULT_PLAN).pool("training"), "training-node-1")


class FakeCaller:
    endpoint = "https://127.0.0.1:6443"

    def __init__(self, items: dict[str, list[dict]], status: int = 200):
        self.items, self.status, self.calls = items, status, []

    def call(self, method, path, **kw):
        self.calls.append(path)
        if self.status != 200:
            return Response(self.status, {"kind": "Status", "message": f'pods is forbidden: cannot list "{path}"'})
        return Response(200, {"items": self.items.get(path.rsplit("/", 1)[-1], [])})


class Clock:
    def __init__(self):
        self.now = 0.0

    def __call__(self):
        return self.now


def renderer(caller, clock=None):
    clock = clock or Clock()
    return E.Renderer(E.ClusterReader(caller, clock), clock)


def test_a_running_gpu_pod_shows_on_its_card_with_its_namespace_pod_and_figures():
    env = {"WORKLOAD_GPU_UTIL": "90", "WORKLOAD_GPU_MEM_MIB": "30000"}
    r = renderer(FakeCaller({"nodes": [NODE], "pods": [pod("train-0", env=env)]}))
    samples, _, _ = parse_exposition(r.dcgm())
    (labels, util), = series(samples, "DCGM_FI_DEV_GPU_UTIL", pod="train-0")
    assert (labels["namespace"], labels["container"], labels["gpu"], labels["Hostname"], util) == \
        ("team-vision", "main", "0", "training-node-1", 90)
    assert series(samples, "DCGM_FI_DEV_FB_USED", pod="train-0")[0][1] == 30000
    ksm, _, _ = parse_exposition(r.kube_state())
    assert series(ksm, "kube_node_status_capacity", resource="nvidia_com_gpu")[0][1] == 8
    assert series(ksm, "kube_pod_status_phase", pod="train-0", phase="Running")[0][1] == 1


def test_one_listing_serves_both_paths_of_a_scrape_and_a_later_scrape_lists_again():
    caller, clock = FakeCaller({"nodes": [NODE]}), Clock()
    r = renderer(caller, clock)
    r.dcgm()
    r.kube_state()
    listed = [*E.LISTS.values(), *E.OPTIONAL.values()]
    assert caller.calls == listed
    clock.now += E.SNAPSHOT_SECONDS
    r.render(E.DCGM_PATH)
    assert len(caller.calls) == 2 * len(listed)
    assert r.render("/other") is None


def test_a_refused_listing_names_the_endpoint_and_the_fix():
    with pytest.raises(SourceUnavailable, match=r"127.0.0.1:6443/api/v1/nodes: HTTP 403.*list on nodes, pods"):
        renderer(FakeCaller({}, status=403)).dcgm()


def test_the_server_answers_503_with_the_reason_when_the_api_server_refuses():
    server = ThreadingHTTPServer(("127.0.0.1", 0), E._handler(renderer(FakeCaller({}, status=403))))
    Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True).start()
    base = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        with pytest.raises(urllib.error.HTTPError) as err:
            urllib.request.urlopen(base + E.DCGM_PATH, timeout=10)
        assert err.value.code == 503 and b"HTTP 403" in err.value.read()
        with urllib.request.urlopen(base + "/healthz", timeout=10) as ok:
            assert ok.status == 200
    finally:
        server.shutdown()
        server.server_close()


def test_a_kubeconfig_without_a_current_context_or_missing_fails_with_the_fix(tmp_path):
    (tmp_path / "k").write_text("apiVersion: v1\nkind: Config\n")
    with pytest.raises(SourceUnavailable, match="no current-context.*--context"):
        E.start_exporter(tmp_path / "k")
    with pytest.raises(SourceUnavailable, match="cannot read it"):
        E.start_exporter(tmp_path / "missing")
