"""The sealed bundle: one .tar.gz with the report in every format, the runs it judged, the plan and its hash,
the Data Docs, SHA256SUMS and a manifest of manifests; verify names every file changed, added or removed."""

import hashlib
import io
import json
import re
import shutil
import tarfile

import pytest

from .conftest import GOOD_SCORES
from gpupoc.cli import main
from gpupoc.plan import DEFAULT_PLAN, load_plan, plan_hash
from gpupoc.report import build_report
from gpupoc.report.bundle import MANIFESTS, SUMS, TOP, bundle_path, create, spec_for_report, verify
from tests import session_cache


@pytest.fixture
def root_copy(tmp_path_factory, tmp_path):
    """A copy of its own of the good root with the default plan's report ``report/manual__1`` in it, the report
    built once per test session (``tests/session_cache.py``): a test reads or changes only its copy."""
    def build(d):
        root = d / "evidence"
        shutil.copytree(session_cache.good_root(tmp_path_factory, "bundle-base"), root,
                        ignore=shutil.ignore_patterns("report"))
        build_report(root, out_dir=root / "report" / "manual__1", plan=DEFAULT_PLAN, scorecard=GOOD_SCORES)

    dst = tmp_path / "evidence"
    shutil.copytree(session_cache.shared(tmp_path_factory, "bundle-report", build) / "evidence", dst)
    return dst


@pytest.fixture
def report_dir(root_copy):
    return root_copy / "report" / "manual__1"


def _members(path):
    with tarfile.open(path, "r:gz") as tar:
        return {m.name.removeprefix(f"{TOP}/"): tar.extractfile(m).read() for m in tar.getmembers() if m.isfile()}


def _rewrite(path, change):
    """The bundle with ``change(members)`` applied, written back in place (as someone editing it would)."""
    members = _members(path)
    change(members)
    with tarfile.open(path, "w:gz") as tar:
        for name, data in members.items():
            info = tarfile.TarInfo(f"{TOP}/{name}")
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))


def test_the_bundle_holds_every_format_every_run_the_plan_and_the_data_docs(report_dir, root_copy):
    path = create(spec_for_report(report_dir), bundle_path(report_dir))
    assert path == root_copy / "report" / "manual__1.bundle.tar.gz"
    files = _members(path)
    rep = "evidence/report/manual__1"
    for name in ("report.html", "summary.html", "report.md", "report.json", "report.junit.xml", "report-inputs.json"):
        assert f"{rep}/{name}" in files, name
    for dag in ("poc_queue_congestion", "poc_tenant_isolation", "poc_utilization", "poc_fault_recovery",
                "poc_audit_trail"):
        run = f"evidence/{dag}/scheduled__1"
        assert {f"{run}/manifest.json", f"{run}/validation/summary.json"} <= set(files)
        manifest = json.loads(files[f"{run}/manifest.json"])
        for entry in manifest["tables"].values():
            assert hashlib.sha256(files[f"{run}/{entry['path']}"]).hexdigest() == entry["sha256"]
    assert "evidence/data_docs/local_site/index.html" in files
    assert files["plan/default.yaml"] == DEFAULT_PLAN.read_bytes()
    assert files["plan/plan_hash.txt"].decode().startswith(plan_hash(load_plan(DEFAULT_PLAN)))
    sums = dict(reversed(line.split("  ", 1)) for line in files[SUMS].decode().splitlines())
    assert set(sums) == set(files) - {SUMS}
    assert all(hashlib.sha256(files[n]).hexdigest() == sha for n, sha in sums.items())
    mm = json.loads(files[MANIFESTS])
    assert len(mm["runs"]) == 5 and mm["reports"][0]["dir"] == rep and mm["reports"][0]["decision"] == "go-live"
    assert mm["plan"]["plan_hash"] == plan_hash(load_plan(DEFAULT_PLAN))


def test_a_fresh_bundle_verifies_and_is_byte_for_byte_reproducible(report_dir, tmp_path):
    a = create(spec_for_report(report_dir), tmp_path / "a.tar.gz")
    b = create(spec_for_report(report_dir), tmp_path / "b.tar.gz")
    assert a.read_bytes() == b.read_bytes()
    res = verify(a)
    assert res.ok and res.files > 50 and len(res.sums_sha256) == 64


def test_links_of_the_report_resolve_inside_the_unpacked_bundle(report_dir, tmp_path):
    path = create(spec_for_report(report_dir), tmp_path / "b.tar.gz")
    with tarfile.open(path, "r:gz") as tar:
        tar.extractall(tmp_path / "x", filter="data")
    rep = tmp_path / "x" / TOP / "evidence" / "report" / "manual__1"
    links = re.findall(r'href="([^"#][^"]*)"', (rep / "report.html").read_text())
    assert links and all((rep / h).resolve().is_file() for h in links)


def test_verify_names_each_file_changed_added_or_removed(report_dir, tmp_path, capsys):
    path = create(spec_for_report(report_dir), tmp_path / "b.tar.gz")
    table = "evidence/poc_tenant_isolation/scheduled__1/tables/access_probes.parquet"

    def tamper(m):
        m[table] = m[table][:-8] + b"\0" * 8
        m["evidence/report/manual__1/extra.txt"] = b"added later"
        del m["evidence/report/manual__1/report.md"]

    _rewrite(path, tamper)
    res = verify(path)
    assert res.changed == [table] and res.added == ["evidence/report/manual__1/extra.txt"]
    assert res.removed == ["evidence/report/manual__1/report.md"]
    assert any(line.startswith(table) and "run's manifest" in line for line in res.inconsistent)
    assert main(["bundle", "verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert f"changed: {table}" in out and "added: evidence/report/manual__1/extra.txt" in out
    assert "removed: evidence/report/manual__1/report.md" in out


def test_a_forged_seal_is_still_caught_by_the_manifests(report_dir, tmp_path):
    path = create(spec_for_report(report_dir), tmp_path / "b.tar.gz")
    table = "evidence/poc_tenant_isolation/scheduled__1/tables/access_probes.parquet"

    def forge(m):
        m[table] = m[table][:-8] + b"\0" * 8
        m[SUMS] = "".join(f"{hashlib.sha256(d).hexdigest()}  {n}\n" for n, d in sorted(m.items()) if n != SUMS).encode()

    _rewrite(path, forge)
    res = verify(path)
    assert not res.changed and not res.ok and any(table in line for line in res.inconsistent)


def test_the_bundle_command_writes_beside_the_report_and_verify_says_ok(report_dir, capsys):
    assert main(["bundle", str(report_dir)]) == 0
    assert bundle_path(report_dir).is_file()
    assert main(["bundle", "verify", str(bundle_path(report_dir))]) == 0
    assert "ok: " in capsys.readouterr().out


def test_the_window_takes_the_runs_that_ended_in_it_and_the_reports_that_judged_only_them(report_dir, root_copy,
                                                                                          tmp_path, capsys):
    out = tmp_path / "w.tar.gz"
    assert main(["bundle", "--window", "2026-11-30T00:00:00Z/2026-11-30T23:59:59Z", "--root", str(root_copy),
                 "--out", str(out)]) == 0
    files = _members(out)
    assert "evidence/report/manual__1/report.html" in files and "evidence/poc_utilization/scheduled__1/manifest.json" in files
    assert main(["bundle", "--window", "2027-01-01T00:00:00Z/2027-01-02T00:00:00Z", "--root", str(root_copy)]) == 2
    assert "no run's collection window ends within" in capsys.readouterr().err


def test_bad_input_is_named(tmp_path, capsys):
    assert main(["bundle", str(tmp_path)]) == 2
    assert "no report-inputs.json" in capsys.readouterr().err
    (tmp_path / "x.tar.gz").write_bytes(b"not a tarball")
    assert main(["bundle", "verify", str(tmp_path / "x.tar.gz")]) == 2
    assert "not a readable .tar.gz" in capsys.readouterr().err
