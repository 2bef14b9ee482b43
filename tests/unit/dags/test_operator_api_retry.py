"""The wave operator's own LIST of its pod survives a throttled API server (gpupoc.dags.operator.find_pod)."""

from __future__ import annotations

from types import SimpleNamespace

import pytest
from airflow.providers.cncf.kubernetes.operators.pod import KubernetesPodOperator
from kubernetes.client.exceptions import ApiException

from gpupoc.common.api_retry import ApiGaveUp
from gpupoc.dags.operator import GpuWorkloadOperator


def _refused(status: int, retry_after: str | None) -> ApiException:
    exc = ApiException(status=status, reason="refused")
    exc.headers = {"Retry-After": retry_after} if retry_after else {}
    return exc


def Op(answers) -> GpuWorkloadOperator:  # noqa: N802 - stands for the operator
    """The operator without a plan or Airflow's set-up: only ``find_pod`` and its retries."""
    op = GpuWorkloadOperator.__new__(GpuWorkloadOperator)
    for k, v in {"answers": list(answers), "finds": [], "slept": [], "workload_key": "train-1"}.items():
        object.__setattr__(op, k, v)
    object.__setattr__(op, "_retry_sleep", op.slept.append)
    return op


@pytest.fixture
def provider_find(monkeypatch):
    def find(self, namespace, context, *, exclude_checked=True):
        self.finds.append(namespace)
        answer = self.answers.pop(0)
        if isinstance(answer, Exception):
            raise answer
        return answer

    monkeypatch.setattr(KubernetesPodOperator, "find_pod", find)


def test_a_throttled_or_unavailable_find_is_asked_again_and_finds_the_pod(provider_find):
    pod = SimpleNamespace(name="train-1-abc")
    op = Op([_refused(429, "2"), _refused(503, None), pod])
    assert op.find_pod("team-a", {}) is pod and len(op.finds) == 3
    assert op.slept[0] == 2.0 and 0 < op.slept[1] <= 1.0, op.slept


def test_a_forbidden_find_is_not_asked_again_and_a_find_throttled_too_long_names_the_list_and_the_fix(
        provider_find):
    op = Op([_refused(403, None)])
    with pytest.raises(ApiException):
        op.find_pod("team-a", {})
    assert len(op.finds) == 1 and not op.slept
    op = Op([_refused(429, "1")] * 20)
    with pytest.raises(ApiGaveUp) as err:
        op.find_pod("team-a", {})
    assert "namespaces/team-a/pods" in err.value.endpoint and "train-1" in err.value.endpoint
    assert err.value.status == 429 and err.value.fix and len(op.finds) == 10
