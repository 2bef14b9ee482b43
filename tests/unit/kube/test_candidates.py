"""The candidate catalogue: one entry per scheduler mode, each with its upstream project, the version read from
(or none recorded), its behaviours and its fidelity; the labels it gives a run's candidate."""

from pathlib import Path

import pytest

from gpupoc.exceptions import ConfigError
from gpupoc.kube.candidates import (CandidateKind, FidelityStatus, label_for, load_catalogue, pinned)
from gpupoc.kube.schedulers import SchedulerMode

REPO = Path(__file__).resolve().parents[3]


def test_every_scheduler_mode_is_catalogued_once_with_behaviours_and_chinese_words():
    cat = load_catalogue()
    assert sorted(m.mode.value for m in cat.modes) == sorted(m.value for m in SchedulerMode)
    for m in cat.modes:
        assert m.behaviours and len(m.zh.behaviours) == len(m.behaviours), m.mode
        assert m.read_from_note, f"{m.mode}: say where its upstream version (or its absence) is recorded"


def test_the_versions_read_from_are_the_ones_the_code_records_and_none_is_invented():
    cat = load_catalogue()
    assert {m.mode.value: m.read_from for m in cat.modes} == {
        "kube": "v1.37", "kueue": "v0.17.0", "volcano": None, "kai": None, "hami": "v2.x"}


def test_a_measured_mode_names_its_tests_and_they_exist():
    for m in load_catalogue().modes:
        if m.fidelity.status is FidelityStatus.NOT_MEASURED:
            assert not m.fidelity.tests and m.fidelity.against is None
            continue
        assert m.fidelity.tests and m.fidelity.docs, m.mode
        assert all((REPO / t).is_file() for t in m.fidelity.tests), m.fidelity.tests


def test_only_kube_scheduler_and_kueue_are_real_here_and_their_pins_are_read():
    assert load_catalogue().real_here == ("kube-scheduler", "kueue")
    assert pinned("KUEUE_VERSION") == "v0.17.0" and pinned("KUBERNETES_VERSION") == "v1.37.2"


def test_a_missing_pins_file_leaves_the_real_version_not_recorded(tmp_path):
    assert pinned("KUEUE_VERSION", tmp_path / "absent.env") is None
    label = label_for("kueue", False, 3, "v1.37.2", pins=tmp_path / "absent.env")
    assert label.kind is CandidateKind.REAL and label.version is None
    assert label.text == "real Kueue (version not recorded) on Kubernetes v1.37.2 (KWOK nodes)"


@pytest.mark.parametrize("adapter", ["kube-scheduler", "kueue", "volcano", "kai", "hami"])
def test_on_the_simulated_cluster_every_candidate_is_a_simulated_mode(adapter):
    label = label_for(adapter, True, 0, "v1.31.4")
    assert label.kind is CandidateKind.SIMULATED and label.text.startswith("simulated mode of ")
    assert "real" not in label.text.split("(fidelity")[0]


def test_a_mode_without_a_recorded_version_says_so(tmp_path):
    bare = tmp_path / "c.yaml"
    bare.write_text("modes:\n  - {mode: volcano, adapter: volcano, project: Volcano, repository: volcano-sh/volcano,"
                    " read_from: null, read_from_note: none, behaviours: [gangs], fidelity: {status: not measured}}\n")
    label = label_for("volcano", True, 0, None, catalogue=load_catalogue(bare))
    assert label.text.startswith("simulated mode of Volcano (upstream version not recorded)")
    assert label.version is None and label.wording_matches is None
    assert "fidelity: not measured" in label_for("kai", True, 0, None).text


def test_a_version_matched_by_wording_is_labelled_so_never_as_the_version_read():
    label = label_for("volcano", True, 0, None)
    assert label.version == "v1.15.1" and not label.version_recorded
    assert label.text.startswith("simulated mode of Volcano v1.15.1 (matched by its wording: v1.13.0 to v1.15.1)")
    kai = label_for("kai", True, 0, None)
    assert kai.text.startswith("simulated mode of KAI Scheduler v0.13.0 (matched by its wording: v0.12.0 to v0.13.0)")
    hami = label_for("hami", True, 0, None)  # its code records v2.x: that stays the version, the match refines it
    assert hami.version == "v2.x" and hami.version_recorded
    assert hami.text.startswith("simulated mode of HAMi v2.x (its wording matches v2.9.0 to v2.10.0)")


def test_every_mode_without_an_exact_recorded_version_has_its_wording_matched_to_upstream_releases():
    for m in load_catalogue().modes:
        exact = m.read_from is not None and "x" not in m.read_from
        assert exact or m.wording_match is not None, f"{m.mode.value}: no exact version recorded and none matched"
        if m.wording_match:
            assert m.wording_match.first_because and m.wording_match.checked, m.mode.value


def test_a_real_cluster_of_ones_own_is_real_with_the_version_it_recorded():
    assert label_for("kube-scheduler", False, 0, "v1.30.1").text == "real kube-scheduler v1.30.1 on Kubernetes v1.30.1"
    assert label_for("volcano", False, 0, "v1.30.1").text == "real Volcano (version not recorded) on Kubernetes v1.30.1"


def test_unrecorded_nodes_are_never_taken_for_real():
    assert label_for("kueue", None, None, "v1.37.2").kind is CandidateKind.NOT_KNOWN


def test_a_broken_catalogue_is_refused_naming_the_field(tmp_path):
    bad = tmp_path / "c.yaml"
    bad.write_text("modes:\n  - mode: kube\n    adapter: kube-scheduler\n")
    with pytest.raises(ConfigError) as err:
        load_catalogue(bad)
    assert "modes.0.project" in str(err.value)


def test_the_comparison_page_s_table_of_simulated_modes_is_the_catalogue_s():
    text = (REPO / "docs" / "comparison.md").read_text(encoding="utf-8")
    table = text.split("### The simulated modes", 1)[1].split("| mode | imitates |", 1)[1].split("\n\n", 1)[0]
    rows = {r.split("|")[1].strip().strip("`"): [c.strip() for c in r.split("|")[1:-1]]
            for r in table.splitlines() if r.startswith("| `")}
    for m in load_catalogue().modes:
        assert m.mode.value in rows, f"docs/comparison.md does not list the {m.mode.value} mode"
        row = rows[m.mode.value]
        assert row[2] == (m.read_from or "not recorded"), f"{m.mode.value}: the page says {row[2]!r}"
        span = m.wording_match.span.replace(" to ", "–") if m.wording_match else "not checked"
        assert row[3] == span, f"{m.mode.value}: the page's wording match says {row[3]!r}, the catalogue {span!r}"
        assert row[6].startswith(m.fidelity.status.value), f"{m.mode.value}: the page says {row[6]!r}"


def test_a_real_candidate_says_what_its_run_switched_on():
    label = label_for("kube-scheduler", False, 5, "v1.37.2", extras=("DRA GPUs", "Workload-API gangs"))
    assert label.text.startswith("real kube-scheduler v1.37.2 with DRA GPUs and Workload-API gangs on Kubernetes")
    assert label.extras == ["DRA GPUs", "Workload-API gangs"]


def test_the_comparison_page_says_how_each_unrecorded_version_was_matched():
    text = (REPO / "docs" / "comparison.md").read_text(encoding="utf-8")
    table = text.split("How each unrecorded version was matched", 1)[1].split("\n\n", 2)[1]
    rows = {r.split("|")[1].strip().strip("`"): [c.strip() for c in r.split("|")[1:-1]]
            for r in table.splitlines() if r.startswith("| `")}
    matched = {m.mode.value: m.wording_match for m in load_catalogue().modes if m.wording_match}
    assert set(rows) == set(matched), "the page's table and the catalogue's wording matches name other modes"
    for mode, match in matched.items():
        assert rows[mode][1].startswith(f"{match.oldest}:"), f"{mode}: the page says {rows[mode][1]!r}"
        assert rows[mode][2].startswith("v") and f"to {match.newest} (" in rows[mode][2], rows[mode][2]
