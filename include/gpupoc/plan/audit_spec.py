"""Where the platform's audit events come from (``evidence_sources.audit``), one of:

- ``file``: the API server's ``--audit-log-path`` (audit.k8s.io/v1 Event JSON lines), readable where the
  pipeline runs (``evidence_sources.audit_log_path`` in older plans means this);
- ``webhook``: the JSON-lines record of the audit webhook receiver (``gpupoc audit webhook up``) that the API
  server's ``--audit-webhook-config-file`` points at;
- ``command``: a command that prints a window's events, e.g. an export from the cloud's log service, in one of
  the formats of ``gpupoc.monitoring.audit_formats`` (audit-events, eks, gke, aks).

Each source's ``catch_up_seconds`` is how long a reader waits for the source to hold the run's last request:
the webhook batches (kube-apiserver sends at least every ``--audit-webhook-batch-max-wait``, 30 s by default),
a cloud export lags by minutes.
"""

from __future__ import annotations

from typing import Annotated, Literal, Union

from pydantic import Field, field_validator

from gpupoc.common.fields import PositiveInt, ServiceUrl, StrictModel

COMMAND_PLACEHOLDERS = ("start", "end", "start_ms", "end_ms")


class FileAudit(StrictModel):
    kind: Literal["file"]
    path: str = Field(min_length=1, description="the API server's audit log; relative to the plan file")
    catch_up_seconds: PositiveInt = 5


class WebhookAudit(StrictModel):
    kind: Literal["webhook"]
    record: str = Field(min_length=1, description="the receiver's JSON-lines record; relative to the plan file")
    url: ServiceUrl | None = Field(default=None, description="the receiver's URL (shown in the evidence)")
    catch_up_seconds: PositiveInt = Field(default=60, description="above the API server's batch max wait")


class CommandAudit(StrictModel):
    kind: Literal["command"]
    command: str = Field(min_length=1, description="prints the window's events; {start} {end} (RFC 3339, UTC) "
                         "and {start_ms} {end_ms} (epoch milliseconds) are replaced")
    format: Literal["audit-events", "eks", "gke", "aks"] = Field(
        default="audit-events", description="what the command prints (gpupoc.monitoring.audit_formats)")
    timeout_seconds: PositiveInt = 300
    catch_up_seconds: PositiveInt = Field(default=600, description="cloud log exports lag by minutes")

    @field_validator("command")
    @classmethod
    def _names_the_window(cls, v: str) -> str:
        if not any("{" + p + "}" in v for p in COMMAND_PLACEHOLDERS):
            raise ValueError("the command must select the window with {start} and {end} (or {start_ms} and "
                             "{end_ms})")
        return v


AuditSpec = Annotated[Union[FileAudit, WebhookAudit, CommandAudit], Field(discriminator="kind")]
