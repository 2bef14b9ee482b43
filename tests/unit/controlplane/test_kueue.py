"""The local Kueue's bookkeeping: its pinned version, its ports chosen once and kept, a missing binary naming
the build command."""

from __future__ import annotations

import pytest

from gpupoc.controlplane.binaries import Binaries, BinariesMissing
from gpupoc.controlplane.kueue import kueue_ports, module_dir, pinned_kueue_version, start_kueue
from gpupoc.controlplane.layout import Layout, Ports
from gpupoc.controlplane.plane import ControlPlane
from gpupoc.exceptions import GpupocError


def test_the_pinned_version_comes_from_the_pins_file(tmp_path):
    pins = tmp_path / "pins.env"
    pins.write_text("KUBERNETES_VERSION=v1.37.2\nKUEUE_VERSION=v0.17.0\n")
    assert pinned_kueue_version(pins) == "v0.17.0"
    pins.write_text("KUBERNETES_VERSION=v1.37.2\n")
    with pytest.raises(GpupocError, match="KUEUE_VERSION"):
        pinned_kueue_version(pins)


def test_ports_are_chosen_once_and_kept(tmp_path):
    first = kueue_ports(tmp_path)
    assert len({first.webhook, first.health, first.metrics, first.visibility}) == 4
    assert kueue_ports(tmp_path) == first


def test_ports_recorded_without_a_visibility_port_gain_one(tmp_path):
    (tmp_path / "ports.json").write_text('{"webhook": 31000, "health": 31001, "metrics": 31002}')
    ports = kueue_ports(tmp_path)
    assert (ports.webhook, ports.health, ports.metrics) == (31000, 31001, 31002)
    assert ports.visibility not in (0, 31000, 31001, 31002)
    assert kueue_ports(tmp_path) == ports


def test_unreadable_ports_name_the_file(tmp_path):
    (tmp_path / "ports.json").write_text("{not json")
    with pytest.raises(GpupocError, match="ports.json"):
        kueue_ports(tmp_path)


def test_the_module_is_found_in_the_go_module_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("GOMODCACHE", str(tmp_path))
    assert module_dir("v0.17.0") == tmp_path / "sigs.k8s.io" / "kueue@v0.17.0"


def test_a_missing_binary_names_the_build_command(tmp_path):
    b = Binaries(tmp_path, *(tmp_path / n for n in ("etcd", "a", "c", "s", "kubectl", "kwok")), "v1.37.2")
    cp = ControlPlane(Layout(tmp_path), Ports(1, 2, 3, 4, 5, 6), b)
    with pytest.raises(BinariesMissing, match="build.sh --with-kueue"):
        start_kueue(cp)
    assert not (tmp_path / "kueue").exists()  # nothing was made before the check
