"""The identities' kubeconfig: whose contexts, how long the tokens last, what the file holds."""

import base64
import json
from datetime import datetime, timedelta, timezone

import pytest

from gpupoc.cluster.kubeconfig import (MIN_SECONDS, KubectlAdmin, identities, kubeconfig_dict, token_expiry,
                                       token_seconds)
from gpupoc.exceptions import ToolMissing
from gpupoc.plan import load_plan
from gpupoc.plan.loader import DEFAULT_PLAN


def _jwt(claims: dict) -> str:
    enc = lambda d: base64.urlsafe_b64encode(json.dumps(d).encode()).rstrip(b"=").decode()  # noqa: E731
    return f"{enc({'alg': 'RS256'})}.{enc(claims)}.sig"


def test_the_runner_comes_first_under_the_plans_admin_context_then_every_tenant():
    plan = load_plan(DEFAULT_PLAN)
    ids = identities(plan)
    assert ids[0].context == plan.platform.admin_context
    assert ids[0].username == "system:serviceaccount:gpupoc-system:gpupoc-runner"
    assert [i.context for i in ids[1:]] == [t.kube_context for t in plan.tenants]


def test_tokens_last_until_a_day_after_the_window_unless_the_plan_says_otherwise():
    plan = load_plan(DEFAULT_PLAN)
    end = plan.window.aware(plan.window.end)
    now = end - timedelta(days=2)
    assert token_seconds(plan, now) == int(timedelta(days=3).total_seconds())
    assert token_seconds(plan, end + timedelta(days=5)) == MIN_SECONDS, "never below the API server's minimum"
    fixed = plan.model_copy(update={"cluster": plan.cluster.model_copy(update={"token_hours": 2.5})})
    assert token_seconds(fixed, now) == 9000


def test_a_tokens_expiry_is_read_from_its_claims_and_none_for_an_opaque_token():
    exp = datetime(2027, 1, 2, 3, 4, 5, tzinfo=timezone.utc)
    assert token_expiry(_jwt({"exp": int(exp.timestamp())})) == exp
    assert token_expiry("opaque-token") is None


def test_each_context_names_its_namespace_and_its_own_user():
    plan = load_plan(DEFAULT_PLAN)
    ids = identities(plan)
    kc = kubeconfig_dict({"server": "https://x:6443"}, [(i, f"t-{i.context}") for i in ids], ids[0].context)
    ctx = {c["name"]: c["context"] for c in kc["contexts"]}
    assert ctx["team-nlp"] == {"cluster": "gpupoc", "user": "team-nlp", "namespace": "team-nlp"}
    users = {u["name"]: u["user"]["token"] for u in kc["users"]}
    assert users["team-nlp"] == "t-team-nlp" and kc["current-context"] == plan.platform.admin_context


def test_without_kubectl_the_error_says_how_to_install_it(monkeypatch, tmp_path):
    from gpupoc.controlplane.binaries import BIN_ENV, bin_dir

    monkeypatch.setenv("PATH", "/nonexistent")
    monkeypatch.setenv(BIN_ENV, str(tmp_path))  # nor a built one
    bin_dir.cache_clear()
    try:
        with pytest.raises(ToolMissing, match="install kubectl.*make control-plane"):
            KubectlAdmin().create_token("team-nlp", "runner", 3600)
    finally:
        bin_dir.cache_clear()
