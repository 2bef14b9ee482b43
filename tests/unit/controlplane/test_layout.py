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


def test_a_port_with_a_listener_is_taken_and_a_closed_one_is_free():
    import socket

    from gpupoc.controlplane.layout import port_free

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen()
        port = s.getsockname()[1]
        assert not port_free(port)
    assert port_free(port)
