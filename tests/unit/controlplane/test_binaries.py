"""The binaries: a missing one fails naming `make control-plane`."""

from __future__ import annotations

import pytest

from gpupoc.controlplane import binaries
from gpupoc.controlplane.binaries import BinariesMissing, control_plane_binaries


def test_missing_binaries_name_the_make_target(tmp_path):
    (tmp_path / "etcd").write_text("")
    with pytest.raises(BinariesMissing, match="make control-plane") as err:
        control_plane_binaries(tmp_path)
    assert "kube-apiserver" in str(err.value) and "kwok" in str(err.value)


def test_every_binary_present_gives_their_paths_and_the_pinned_version(tmp_path):
    for name in binaries.NAMES:
        (tmp_path / name).write_text("#!/bin/sh\n")
        (tmp_path / name).chmod(0o755)
    b = control_plane_binaries(tmp_path)
    assert b.kubectl == tmp_path / "kubectl" and b.kube_apiserver == tmp_path / "kube-apiserver"
    assert b.kubernetes_version.startswith("v1.")


def test_a_command_line_falls_back_to_the_machines_kubectl(monkeypatch, tmp_path):
    monkeypatch.setenv(binaries.BIN_ENV, str(tmp_path))
    binaries.bin_dir.cache_clear()
    try:
        assert binaries.kubectl_command().endswith("kubectl")
        with pytest.raises(BinariesMissing, match="make control-plane"):
            binaries.kubectl_path()
    finally:
        binaries.bin_dir.cache_clear()
