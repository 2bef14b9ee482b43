"""A pod operator reads a finished container's log whole, and follows a running one's."""

from kubernetes.client import V1ContainerState, V1ContainerStateRunning, V1ContainerStateTerminated
from kubernetes.client import V1ContainerStatus, V1ObjectMeta, V1Pod, V1PodStatus

from gpupoc.dags.finished_logs import FinishedLogsMixin
from gpupoc.dags.operator import GpuWorkloadOperator
from gpupoc.dags.service_operators import ServiceLoadOperator


class _Provider:
    """The provider's log read, recording how it was asked."""

    def __init__(self):
        self.asked = []

    def _write_logs(self, pod, follow=False, since_time=None):
        self.asked.append(follow)


class _Operator(FinishedLogsMixin, _Provider):
    base_container_name = "base"


def _pod(state: V1ContainerState) -> V1Pod:
    status = V1ContainerStatus(name="base", state=state, image="i", image_id="", ready=False, restart_count=0)
    return V1Pod(metadata=V1ObjectMeta(name="p", namespace="n"), status=V1PodStatus(container_statuses=[status]))


def test_a_terminated_containers_log_is_not_followed():
    op = _Operator()
    op._write_logs(_pod(V1ContainerState(terminated=V1ContainerStateTerminated(exit_code=0))), follow=True)
    assert op.asked == [False]


def test_a_running_containers_log_is_followed_as_asked():
    op = _Operator()
    running = _pod(V1ContainerState(running=V1ContainerStateRunning()))
    op._write_logs(running, follow=True)
    op._write_logs(running, follow=False)
    assert op.asked == [True, False]


def test_both_pod_operators_read_finished_logs_whole():
    assert issubclass(GpuWorkloadOperator, FinishedLogsMixin) and issubclass(ServiceLoadOperator, FinishedLogsMixin)
