"""controlplane/exporter_process: the exporter as a process of a control plane's directory; one that cannot start
fails with its log's reason and leaves no pid behind."""

from __future__ import annotations

import pytest

from gpupoc.controlplane.exporter_process import running_exporter, spawn_exporter, stop_exporter
from gpupoc.controlplane.layout import Layout
from gpupoc.exceptions import GpupocError


def test_an_exporter_without_a_kubeconfig_fails_with_the_reason_and_leaves_no_pid(tmp_path):
    with pytest.raises(GpupocError, match=r"exited during start-up(.|\n)*admin.kubeconfig: cannot read it"):
        spawn_exporter(tmp_path)
    assert not Layout(tmp_path).pid_file("exporter").exists()
    assert running_exporter(tmp_path) is None


def test_stopping_where_none_runs_says_so(tmp_path):
    assert stop_exporter(tmp_path) is False
