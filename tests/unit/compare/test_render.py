"""Each column of the comparison says what its candidate was, in the HTML, the Markdown, the JSON and the
procurement summary: a real scheduler with the version built beside simulated modes with their behaviours and
fidelity; a plan differing only in how node failures are provoked (the real control plane's taint) compares,
with a note."""

import html
import json

import jsonschema
import pytest

from .conftest import copies, rerecord
from gpupoc.compare import compare
from gpupoc.compare.render import SCHEMA_FILE
from gpupoc.exceptions import ComparisonRefused

KWOK = {"nodes.simulated": "0", "nodes.kwok": "9", "kubernetes.gitVersion": "v1.37.2", "adapter": "kueue"}


def _as(platform: dict, plan: dict | None = None, plan_hash: str | None = None):
    def change(manifest, run_dir):
        manifest["platform"] = {**(manifest.get("platform") or {}), **platform}
        if plan is not None:
            manifest["comparable_plan_hash"] = plan_hash
            (run_dir / "files").mkdir(exist_ok=True)
            (run_dir / "files" / "plan.json").write_text(json.dumps(plan))
    return change


@pytest.fixture(scope="module")
def mixed(good_root, tmp_path_factory):
    """kueue on the real control plane (KWOK nodes, real Kueue) beside volcano on the simulated cluster;
    compared once for the tests that read it."""
    tmp_path = tmp_path_factory.mktemp("mixed")
    a, b = copies(good_root, tmp_path)
    rerecord(a, _as(KWOK))
    rerecord(b, _as({"adapter": "volcano"}))
    return compare([f"kueue={a}", f"volcano={b}"], tmp_path / "cmp", pdf=False)


def test_every_column_says_real_or_simulated_mode_in_every_format(mixed):
    out = mixed.out_dir
    data = json.loads((out / "comparison.json").read_text())
    jsonschema.validate(data, json.loads(SCHEMA_FILE.read_text()))
    kinds = {p["label"]: (p["candidate"]["kind"], p["candidate"]["text"]) for p in data["platforms"]}
    assert kinds["kueue"] == ("real", "real Kueue v0.17.0 on Kubernetes v1.37.2 (KWOK nodes)")
    assert kinds["volcano"][0] == "simulated" and kinds["volcano"][1].startswith(
        "simulated mode of Volcano v1.15.1 (matched by its wording: v1.13.0 to v1.15.1)")
    for name in ("comparison.html", "comparison.md"):
        text = html.unescape((out / name).read_text())
        assert "kueue (real Kueue v0.17.0)" in text, name
        assert "volcano (simulated mode of Volcano v1.15.1 (matched by its wording: v1.13.0 to v1.15.1))" in text, name
        assert "Not the products: volcano ran as scheduler modes of gpupoc's simulated GPU cluster" in text, name
        assert "gangs bound whole (minMember)" in text and "not measured" in text, name


def test_the_matrix_and_figure_columns_name_what_each_was(mixed):
    page = html.unescape((mixed.out_dir / "comparison.html").read_text())
    matrix = page.split('id="matrix"', 1)[1].split("</tr>", 1)[0]
    assert "real Kueue v0.17.0" in matrix and "simulated mode of Volcano" in matrix
    figures = page.split('id="figures"', 1)[1].split("</tr>", 1)[0]
    assert "real Kueue v0.17.0" in figures and "simulated mode of Volcano" in figures


def test_the_procurement_summary_keeps_the_simulated_apart(mixed):
    proc = mixed.comparison.procurement
    assert proc.simulated == ["volcano"]
    assert proc.candidates["kueue"].startswith("real Kueue") and proc.candidates["volcano"].startswith("simulated")


def test_two_simulated_columns_carry_no_real_label(two_roots, tmp_path):
    a, b = two_roots
    res = compare([f"kube={a}", f"kai={b}"], tmp_path / "cmp", pdf=False)
    assert res.comparison.procurement.simulated == ["kube", "kai"]
    assert "real " not in " ".join(p.candidate.headline for p in res.comparison.platforms)


def test_a_plan_differing_only_in_its_node_failure_injector_compares_with_a_note(two_roots, tmp_path):
    a, b = two_roots
    plan = {"name": "gpupoc-sim-compare", "test_classes": {"fault_recovery": {"injections": [
        {"kind": "node_failure", "injector": {"method": "sim"}}], "service_failures": [{"injector": None}]}}}
    kwok = json.loads(json.dumps(plan))
    kwok["test_classes"]["fault_recovery"]["injections"][0]["injector"]["method"] = "taint"
    kwok["test_classes"]["fault_recovery"]["service_failures"][0]["injector"] = {"method": "taint"}
    rerecord(a, _as({"adapter": "volcano"}, plan, "1" * 64))
    rerecord(b, _as(KWOK, kwok, "2" * 64))
    res = compare([f"volcano={a}", f"kueue={b}"], tmp_path / "cmp", pdf=False)
    note = " ".join(res.comparison.notes)
    assert "only in how node failures are provoked" in note
    assert "injections[0].injector.method" in note and "service_failures[0].injector" in note


def test_a_plan_differing_in_anything_else_too_is_still_refused(two_roots, tmp_path):
    a, b = two_roots
    plan = {"test_classes": {"fault_recovery": {"injections": [{"injector": {"method": "sim"}}]},
                             "queue_congestion": {"thresholds": {"max_wait_seconds": 180}}}}
    other = {"test_classes": {"fault_recovery": {"injections": [{"injector": {"method": "taint"}}]},
                              "queue_congestion": {"thresholds": {"max_wait_seconds": 999}}}}
    rerecord(a, _as({}, plan, "1" * 64))
    rerecord(b, _as(KWOK, other, "2" * 64))
    with pytest.raises(ComparisonRefused, match="max_wait_seconds"):
        compare([f"a={a}", f"b={b}"], tmp_path / "cmp", pdf=False)
