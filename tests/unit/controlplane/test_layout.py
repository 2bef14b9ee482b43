"""Ports are chosen once and recorded, so a second start listens where the first did."""

from __future__ import annotations

import pytest

from gpupoc.controlplane.layout import Layout, load_or_choose_ports
from gpupoc.exceptions import GpupocError


def test_the_ports_are_distinct_and_recorded(tmp_path):
    layout = Layout(tmp_path)
    layout.make()
    first = load_or_choose_ports(layout)
    assert len(set(vars(first).values())) == len(vars(first))
    assert load_or_choose_ports(layout) == first


def test_an_unreadable_ports_file_names_the_fix(tmp_path):
    layout = Layout(tmp_path)
    layout.make()
    layout.ports_file.write_text("{not json")
    with pytest.raises(GpupocError, match="remove the control plane's directory"):
        load_or_choose_ports(layout)
