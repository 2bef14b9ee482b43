"""A finished container's log is read whole, never followed.

After a deferred pod task resumes, the provider reads the base container's log with ``follow=True`` (when no
``logging_interval`` is set). A kubelet closes a followed log as soon as the container has ended, so that
costs nothing on a real node. KWOK's kubelet API never closes a followed log (``debugging_logs.go``: "it
streams the logs until the connection is closed by the client"), and the read then waits for the client's
read timeout, minutes per task. A container that has ended has written its whole log, so reading it without
following is the same on a real node and ends at once on KWOK.
"""

from __future__ import annotations

from typing import Any

from airflow.providers.cncf.kubernetes.utils.container import container_is_terminated


class FinishedLogsMixin:
    """Put before ``KubernetesPodOperator`` in a pod operator's bases."""

    base_container_name: str

    def _write_logs(self, pod: Any, follow: bool = False, since_time: Any = None) -> None:
        if follow and container_is_terminated(pod, self.base_container_name):
            follow = False
        return super()._write_logs(pod, follow=follow, since_time=since_time)  # type: ignore[misc]
