"""From a plan to a cluster, on a simulated cluster that starts empty: ``gpupoc cluster manifests``, real
``kubectl apply``, ``gpupoc cluster kubeconfig`` (``kubectl create token``) and ``gpupoc preflight``; then the
preflight naming each missing piece with its fix."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest
import yaml

from gpupoc.kube.schedulers import SchedulerMode

from .conftest import kubectl_bin, wait_for
from .real_cluster import CROSS_TENANT_READ, REPO, lines, prepare, tenant_role_without_pods_log

pytestmark = [
    pytest.mark.integration,
    pytest.mark.skipif(not os.access("/usr/bin/prometheus", os.X_OK), reason="Prometheus is not installed: run "
                       "scripts/install-monitoring.sh"),
    pytest.mark.timeout(600),
]


@pytest.fixture(scope="module")
def ready(tmp_path_factory):
    """The "done when" path: empty cluster, manifests applied, kubeconfig minted, monitoring stack scraping."""
    cluster = prepare(tmp_path_factory.mktemp("ready"), monitoring=True)
    yield cluster
    cluster.stop()


def test_an_empty_cluster_given_the_manifests_passes_every_preflight_check(ready):
    rc, report = ready.preflight()
    failures = [r for r in report["results"] if r["status"] == "failed"]
    assert rc == 0 and report["passed"], f"preflight failed: {failures}"
    checks = {r["check"] for r in report["results"] if r["status"] == "ok"}
    assert {"api", "identities.authenticate", "identities.verbs", "identities.isolation", "namespaces", "quotas",
            "priority_classes", "pools", "images", "audit", "prometheus.series", "alerting"} <= checks


def test_the_minted_identities_are_the_plans_service_accounts_with_only_their_rights(ready):
    who = subprocess.run([kubectl_bin(), f"--kubeconfig={ready.kubeconfig}", "--context=team-nlp", "auth", "whoami",
                          "-o", "jsonpath={.status.userInfo.username}"], capture_output=True, text=True, timeout=60)
    assert who.stdout == "system:serviceaccount:team-nlp:runner", who.stderr
    def can(context: str, *args: str) -> str:
        return subprocess.run([kubectl_bin(), f"--kubeconfig={ready.kubeconfig}", f"--context={context}", "auth",
                               "can-i", *args], capture_output=True, text=True, timeout=60).stdout.strip()
    assert can("team-nlp", "get", "pods", "--subresource=log", "-n", "team-nlp") == "yes"
    assert can("team-nlp", "list", "pods", "-n", "team-vision") == "no"
    assert can("admin", "patch", "pods", "-n", "team-vision") == "yes"  # the runner lifts the wave's gate
    assert can("admin", "delete", "nodes") == "no", "the runner is no cluster administrator"
    mode = oct(ready.kubeconfig.stat().st_mode & 0o777)
    assert mode == "0o600", f"the kubeconfig holds tokens and must be private, got {mode}"


def test_applying_the_manifests_again_changes_nothing(ready):
    again = ready.sim.kubectl("apply", "-f", "-", input=ready.manifests)
    assert again.returncode == 0, again.stderr
    assert "created" not in again.stdout and "configured" not in again.stdout, again.stdout


def test_an_unreachable_api_is_one_line_with_the_fix(ready):
    kc = yaml.safe_load(ready.kubeconfig.read_text())
    kc["clusters"][0]["cluster"]["server"] = "https://127.0.0.1:1"
    bad = ready.tmp / "unreachable-kubeconfig"
    bad.write_text(yaml.safe_dump(kc))
    res = subprocess.run([sys.executable, "-m", "gpupoc.cli", "preflight", "--plan", str(ready.plan),
                          "--kubeconfig", str(bad)], capture_output=True, text=True, timeout=120, cwd=str(REPO))
    out = res.stdout.strip().splitlines()
    assert res.returncode == 1 and len(out) == 1, res.stdout + res.stderr
    assert out[0].startswith("✗ api: https://127.0.0.1:1") and "Connection refused" in out[0] and "fix:" in out[0]
    assert "Traceback" not in res.stderr, res.stderr


def test_a_stale_audit_source_is_named_with_its_fix(ready):
    stale = ready.tmp / "stale-audit.log"
    shutil.copy(ready.sim.audit_log, stale)  # what the log held once; the API server writes elsewhere now
    data = yaml.safe_load(ready.plan.read_text())
    data["evidence_sources"]["audit_log_path"] = str(stale)
    data["test_classes"]["audit_trail"]["thresholds"]["max_audit_delay_seconds"] = 2
    plan = ready.tmp / "stale-audit-plan.yaml"
    plan.write_text(yaml.safe_dump(data, sort_keys=False))
    rc, report = ready.preflight("--no-images", plan=plan)
    bad = lines(report, "audit")
    assert rc == 1 and len(bad) == 1, report["results"]
    assert "did not arrive within 2 s" in bad[0]["detail"] and "live stream" in bad[0]["fix"]


def test_no_dcgm_series_is_named_with_its_fix(ready, tmp_path):
    from gpupoc.monitoring.stack import free_port, http_ok

    url = f"http://127.0.0.1:{free_port()}"  # as the stack picks its ports (Prometheus logs no real port for :0)
    prom = subprocess.Popen(["/usr/bin/prometheus", f"--config.file={_empty_prometheus(tmp_path)}",
                             f"--storage.tsdb.path={tmp_path / 'tsdb'}", f"--web.listen-address={url[7:]}"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_for(f"Prometheus ready at {url}", lambda: http_ok(f"{url}/-/ready") or prom.poll() is not None,
                 timeout=60)
        assert prom.poll() is None, f"Prometheus exited {prom.returncode}"
        data = yaml.safe_load(ready.plan.read_text())
        data["evidence_sources"]["prometheus_url"] = url  # a Prometheus that scrapes nothing
        plan = tmp_path / "no-dcgm-plan.yaml"
        plan.write_text(yaml.safe_dump(data, sort_keys=False))
        rc, report = ready.preflight("--no-images", "--class", "utilization", plan=plan)
    finally:
        prom.terminate()
        prom.wait(timeout=30)
    dcgm = [r for r in lines(report, "prometheus.series") if "DCGM_FI_DEV_GPU_UTIL" in r["detail"]]
    assert rc == 1 and {r["subject"] for r in dcgm} == {"training", "inference"}, report["results"]
    assert "training-node-1" in next(r for r in dcgm if r["subject"] == "training")["detail"]
    assert all("dcgm-exporter" in r["fix"] for r in dcgm)


def _empty_prometheus(tmp_path):
    cfg = tmp_path / "prometheus.yml"
    cfg.write_text("global: {scrape_interval: 15s}\nscrape_configs: []\n")
    return cfg


@pytest.fixture(scope="module")
def broken(tmp_path_factory):
    """A prepared cluster, then: team-serving's namespace deleted, team-nlp's Role without pods/log, and a
    RoleBinding letting team-vision read pods in team-nlp."""
    cluster = prepare(tmp_path_factory.mktemp("broken"))
    k = cluster.sim.kubectl
    assert k("delete", "namespace", "team-serving").returncode == 0
    role = k("get", "role", "gpupoc-tenant", "-n", "team-nlp", "-o", "yaml", check=True).stdout
    assert k("replace", "-f", "-", input=tenant_role_without_pods_log(role)).returncode == 0
    assert k("apply", "-f", "-", input=CROSS_TENANT_READ).returncode == 0
    rc, report = cluster.preflight("--no-images")
    yield rc, report
    cluster.stop()


def test_a_missing_namespace_is_named_with_its_fix(broken):
    rc, report = broken
    bad = {r["subject"]: r for r in lines(report, "namespaces")}
    assert rc == 1 and set(bad) == {"team-serving"}, report["results"]
    assert bad["team-serving"]["detail"] == "does not exist"
    assert "gpupoc cluster manifests" in bad["team-serving"]["fix"] and "kubectl apply" in bad["team-serving"]["fix"]


def test_a_tenant_token_without_pods_log_is_named_with_its_fix(broken):
    _rc, report = broken
    bad = {r["subject"]: r for r in lines(report, "identities.verbs")}
    assert "team-nlp" in bad, report["results"]
    assert "may not get pods/log in team-nlp" in bad["team-nlp"]["detail"]
    assert "team-vision" not in bad, "team-vision's Role is intact"
    assert "401" in bad["team-serving"]["detail"], "team-serving's ServiceAccount went with its namespace"
    assert "gpupoc cluster manifests" in bad["team-nlp"]["fix"]


def test_a_tenant_that_can_read_another_namespace_is_named_with_its_fix(broken):
    _rc, report = broken
    bad = {r["subject"]: r for r in lines(report, "identities.isolation")}
    assert "team-vision" in bad and "team-nlp" not in bad, report["results"]
    assert "list pods in team-nlp" in bad["team-vision"]["detail"] and "get pods in team-nlp" in bad["team-vision"][
        "detail"]
    assert "isolation finding" in bad["team-vision"]["detail"] and "rolebindings" in bad["team-vision"]["fix"]


def test_absent_kueue_api_groups_are_named_with_their_fix(tmp_path):
    # a cluster running Volcano (no Kueue installed) given a Kueue plan's manifests: the Kueue objects are refused
    cluster = prepare_kueue_on_volcano(tmp_path)
    try:
        rc, report = cluster.preflight("--no-images")
    finally:
        cluster.stop()
    bad = {r["subject"]: r for r in lines(report, "adapter.api")}
    assert rc == 1 and set(bad) == {"kueue.x-k8s.io/v1beta1", "visibility.kueue.x-k8s.io/v1beta2"}, report["results"]
    assert "not served" in bad["kueue.x-k8s.io/v1beta1"]["detail"] and "install Kueue" in bad[
        "kueue.x-k8s.io/v1beta1"]["fix"]
    assert lines(report, "adapter.queues"), "the LocalQueues cannot exist either"


def prepare_kueue_on_volcano(tmp_path):
    from .real_cluster import PreparedCluster, cli, empty_config, write_plan
    from .conftest import launch

    sim = launch(tmp_path / "sim", config=empty_config(tmp_path / "empty.yaml", SchedulerMode.VOLCANO))
    cluster = PreparedCluster(sim, tmp_path / "plan.yaml", tmp_path / "kubeconfig", "", tmp_path)
    try:
        write_plan(cluster.plan, "kueue.yaml", cluster.kubeconfig, sim, tmp_path / "evidence")
        rendered = cli("cluster", "manifests", "--plan", str(cluster.plan)).stdout
        refused = sim.kubectl("apply", "-f", "-", input=rendered)  # kubectl validates every kind first
        assert refused.returncode != 0 and "could not find the requested resource" in refused.stderr, refused.stderr
        applied = sim.kubectl("apply", "--validate=false", "-f", "-", input=rendered)  # the rest, without Kueue's
        assert applied.returncode != 0 and "kueue.x-k8s.io" in applied.stderr, applied.stderr
        minted = cli("cluster", "kubeconfig", "--plan", str(cluster.plan), "--admin-kubeconfig", str(sim.kubeconfig),
                     "--admin-context", "admin")
        assert minted.returncode == 0, minted.stderr
    except BaseException:
        cluster.stop()
        raise
    return cluster


@pytest.mark.parametrize("mode", [SchedulerMode.KUEUE, SchedulerMode.VOLCANO, SchedulerMode.KAI])
def test_queues_given_through_the_api_are_the_ones_the_scheduler_admits_with(tmp_path, mode):
    cluster = prepare(tmp_path, f"{mode.value}.yaml", mode)
    try:
        rc, report = cluster.preflight("--no-images", "--class", "queue_congestion")
        assert rc == 0, [r for r in report["results"] if r["status"] == "failed"]
        matched = [r for r in report["results"] if r["check"] == "adapter.queues" and "matches" in r["detail"]]
        assert matched, f"the applied queues must match cluster.queues: {report['results']}"
        pod = _submit(cluster, "v-train-1g", "team-nlp")
        wait_for(f"{mode.value}: pod {pod} admitted through its API-created queue and run",
                 lambda: _phase(cluster, pod) in ("Running", "Succeeded"), timeout=90)
    finally:
        cluster.stop()


def _submit(cluster, workload: str, tenant: str) -> str:
    from kubernetes.client import ApiClient

    from gpupoc.plan import load_plan
    from gpupoc.podspec.build import build_pod

    plan = load_plan(cluster.plan)
    pod = ApiClient().sanitize_for_serialization(build_pod(
        plan.workload(workload), plan.tenant(tenant), plan, run_id="queues-from-api", test_class="queue_congestion",
        wave_gate=False, name="through-api-queue"))
    pod["metadata"]["name"] = "through-api-queue"
    created = subprocess.run([kubectl_bin(), f"--kubeconfig={cluster.kubeconfig}", f"--context={tenant}", "create",
                              "-f", "-"], input=yaml.safe_dump(pod), capture_output=True, text=True, timeout=60)
    assert created.returncode == 0, created.stderr
    return pod["metadata"]["name"]


def _phase(cluster, pod: str, ns: str = "team-nlp") -> str:
    return cluster.sim.kubectl("get", "pod", pod, "-n", ns, "-o", "jsonpath={.status.phase}").stdout.strip()
