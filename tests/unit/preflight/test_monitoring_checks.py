"""Prometheus's series for every pool node: a DRA node has no nvidia.com/gpu capacity series, so under
``gpus: dra`` any kube-state series of the node stands for kube-state-metrics."""

from types import SimpleNamespace

from gpupoc.controlplane.dra import dra_nodes
from gpupoc.controlplane.nodes import node_objects
from gpupoc.plan import load_plan
from gpupoc.plan.loader import DEFAULT_PLAN
from gpupoc.preflight.monitoring_checks import DCGM, KSM, KSM_DRA, series


class FakeProm:
    url = "http://127.0.0.1:9090"

    def __init__(self, answers: dict[str, list[str]]):
        self.answers, self.asked = answers, []

    def query(self, expr: str) -> list[dict]:
        self.asked.append(expr)
        return [{"metric": {"node": n, "Hostname": n}} for n in self.answers.get(expr, [])]


def _ctx(ref: str, prom: FakeProm):
    plan = load_plan(ref, kubeconfig_later=True)
    nodes = dra_nodes(node_objects(plan.pools))
    sources = SimpleNamespace(prometheus=prom.url, prometheus_client=lambda timeout: prom)
    return SimpleNamespace(plan=plan, nodes=lambda: nodes, sources=sources)


def test_dra_nodes_pass_on_their_kube_state_labels_and_the_device_plugin_plan_asks_capacity():
    names = [n for p in load_plan(DEFAULT_PLAN, kubeconfig_later=True).pools for n in p.node_names]
    prom = FakeProm({DCGM: names, KSM_DRA: names})
    assert [r.status.value for r in series(_ctx(f"{DEFAULT_PLAN}#kube-dra", prom))] == ["ok", "ok"]
    assert KSM not in prom.asked
    failed = [r for r in series(_ctx(str(DEFAULT_PLAN), prom)) if r.status.value != "ok"]
    assert failed and KSM in failed[0].detail, "a device-plugin cluster still needs the capacity series"
