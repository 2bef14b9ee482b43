"""What one Kubernetes API request asks to do: a verb on an object, named as the API server names it.

The API server derives these attributes from every request path (``RequestInfo``), authorizes on them
(``authorizer.Attributes``) and writes them in the audit event (``verb`` and ``objectRef``). The simulated
cluster's parsed request, its authorizer's attributes and its audit record, and the pipeline's ledger of the
requests it made, all carry this one shape, so an action and its audit record compare field by field.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict


class RequestAttributes(BaseModel):
    """The verb and the object of a request: ``get pods/log`` of ``team-a/train-0`` in API group ``""``."""

    model_config = ConfigDict(extra="forbid")

    verb: str = ""
    resource: str = ""
    subresource: str = ""
    api_group: str = ""
    namespace: str = ""
    name: str = ""

    @property
    def full_resource(self) -> str:
        """``pods/log``: the resource with its subresource, as RBAC rules and 403 messages name it."""
        return f"{self.resource}/{self.subresource}" if self.subresource else self.resource

    def request_attributes(self) -> RequestAttributes:
        """Only these attributes (without what a subclass adds)."""
        return RequestAttributes(**{k: getattr(self, k) for k in RequestAttributes.model_fields})
