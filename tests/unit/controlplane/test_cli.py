"""``gpupoc controlplane up --plan``: a plan whose GPUs are DRA devices starts the control plane with DRA."""

import argparse
from types import SimpleNamespace

import pytest

from gpupoc.controlplane import cli
from gpupoc.plan.loader import DEFAULT_PLAN


@pytest.fixture
def started(monkeypatch):
    """What start_control_plane was given (nothing is started)."""
    import gpupoc.controlplane.plane as plane

    got: dict = {}

    def fake_start(root, **kw):
        got.update(kw)
        return SimpleNamespace(version="v1.37.2", server="https://127.0.0.1:1", timings={}, kubeconfig="k",
                               kubectl="kubectl", audit_log="a")
    monkeypatch.setattr(plane, "start_control_plane", fake_start)
    return got


def _args(tmp_path, plan: str | None, dra: bool = False) -> argparse.Namespace:
    return argparse.Namespace(plan=plan, dir=tmp_path, audit_webhook_url=None, dra=dra, workload_api=False,
                              kueue=False)


@pytest.mark.parametrize("plan, flag, dra", [(f"{DEFAULT_PLAN}#kube-dra", False, True),
                                             (str(DEFAULT_PLAN), False, False),
                                             (str(DEFAULT_PLAN), True, True),
                                             (None, False, False)])
def test_the_plans_gpus_option_or_the_flag_turns_dra_on(started, tmp_path, plan, flag, dra):
    assert cli.cmd_up(_args(tmp_path, plan, flag)) == 0
    assert started["features"].dra is dra
