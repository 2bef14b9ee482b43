"""One plan, several platforms: the choice replaces only the platform block and the evidence root, the
comparable hash leaves the choice out, and an unknown or repeated platform is refused by name."""

import pytest
import yaml

from gpupoc.exceptions import ConfigError
from gpupoc.plan import DEFAULT_PLAN, load_plan, load_plan_file, plan_hash
from gpupoc.plan.platforms import comparable_data, comparable_hash, identity, plan_ref, split_ref


def test_a_reference_names_the_file_and_the_platform():
    assert split_ref("plans/default.yaml#kueue") == ("plans/default.yaml", "kueue")
    assert split_ref("plans/default.yaml") == ("plans/default.yaml", None)
    assert plan_ref("p.yaml", "kai") == "p.yaml#kai" and plan_ref("p.yaml", None) == "p.yaml"


@pytest.mark.parametrize("name,adapter", [("kube", "kube-scheduler"), ("kueue", "kueue"), ("volcano", "volcano"),
                                          ("kai", "kai")])
def test_choosing_a_platform_changes_the_adapter_and_the_evidence_root_only(name, adapter):
    base = load_plan(DEFAULT_PLAN)
    chosen = load_plan(f"{DEFAULT_PLAN}#{name}")
    assert chosen.platform.adapter.value == adapter and chosen.platform.name == name
    assert chosen.platform_choice == name
    assert chosen.evidence_root_path == base.evidence_root_path / name
    assert chosen.platform.kubeconfig == base.platform.kubeconfig
    assert comparable_data(chosen) == comparable_data(base)
    assert comparable_hash(chosen) == comparable_hash(base)
    assert plan_hash(chosen) != plan_hash(base)  # the full hash still says which platform ran


def test_a_plan_that_tests_something_else_hashes_differently(tmp_path):
    data = yaml.safe_load(DEFAULT_PLAN.read_text())
    data["test_classes"]["queue_congestion"]["thresholds"]["max_wait_seconds"] = 999
    data["evidence_root"] = str(tmp_path / "evidence")
    other = tmp_path / "other.yaml"
    other.write_text(yaml.safe_dump(data))
    base = load_plan(DEFAULT_PLAN)
    assert comparable_hash(load_plan(f"{other}#kueue")) != comparable_hash(base)


def test_an_unknown_platform_is_refused_naming_the_known_ones():
    with pytest.raises(ConfigError) as err:
        load_plan(f"{DEFAULT_PLAN}#yunikorn")
    text = str(err.value)
    assert "'yunikorn'" in text and "kube, kueue, volcano, kai" in text and "platforms" in text


def test_repeated_platform_names_are_refused(tmp_path):
    data = yaml.safe_load(DEFAULT_PLAN.read_text())
    data["platforms"].append({"name": "kueue", "adapter": "volcano"})
    data["evidence_root"] = str(tmp_path / "evidence")
    p = tmp_path / "plan.yaml"
    p.write_text(yaml.safe_dump(data))
    index = len(data["platforms"]) - 1
    with pytest.raises(ConfigError, match=rf"platforms\[{index}\]\.name: duplicate platform 'kueue'"):
        load_plan(p)


def test_an_entry_with_its_own_cluster_replaces_the_access_method(tmp_path):
    data = yaml.safe_load(DEFAULT_PLAN.read_text())
    data["platforms"] = [{"name": "vendor", "adapter": "kai", "kubeconfig": str(tmp_path / "vendor.kubeconfig"),
                          "admin_context": "vendor-admin", "evidence_root": str(tmp_path / "vendor-evidence")}]
    data["evidence_root"] = str(tmp_path / "evidence")
    for injection in data["test_classes"]["fault_recovery"]["injections"]:  # a vendor's cluster has no sim endpoint
        if injection["kind"] == "node_failure":
            injection["injector"] = "taint"
    p = tmp_path / "plan.yaml"
    p.write_text(yaml.safe_dump(data))
    plan = load_plan(f"{p}#vendor", kubeconfig_later=True)
    assert plan.platform.admin_context == "vendor-admin"
    assert plan.kubeconfig_path == tmp_path / "vendor.kubeconfig"
    assert plan.evidence_root_path == tmp_path / "vendor-evidence"
    assert identity(plan)["platform_name"] == "vendor"


def test_every_task_reads_the_chosen_plan_through_its_reference():
    plan = load_plan_file(f"{DEFAULT_PLAN}#volcano")
    assert plan.platform.adapter.value == "volcano"
    assert load_plan_file(str(DEFAULT_PLAN)).platform.adapter.value == "kube-scheduler"
