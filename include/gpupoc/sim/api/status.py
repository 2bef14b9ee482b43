"""meta/v1 Status answers and the exception that carries one (apierrors.StatusError)."""

from __future__ import annotations

REASONS = {
    400: "BadRequest", 401: "Unauthorized", 403: "Forbidden", 404: "NotFound", 405: "MethodNotAllowed",
    406: "NotAcceptable", 409: "AlreadyExists", 410: "Expired", 415: "UnsupportedMediaType", 422: "Invalid",
    429: "TooManyRequests", 500: "InternalError", 503: "ServiceUnavailable",
}


def status_obj(code: int, message: str, reason: str | None = None, details: dict | None = None) -> dict:
    """A failure Status as the API server writes it."""
    out = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": message,
           "reason": reason or REASONS.get(code, "Unknown"), "code": code}
    if details:
        out["details"] = details
    if not out["reason"]:
        out.pop("reason")
    return out


def success_obj(details: dict | None = None) -> dict:
    out = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success"}
    if details:
        out["details"] = details
    return out


class StatusError(Exception):
    """Raised anywhere while serving a request; answered as its Status with its code."""

    def __init__(self, code: int, message: str, reason: str | None = None, details: dict | None = None):
        super().__init__(message)
        self.code = code
        self.status = status_obj(code, message, reason, details)
        self.retry_after: int | None = None  # seconds, sent as the Retry-After header


def qualified(resource: str, group: str = "") -> str:
    return f"{resource}.{group}" if group else resource


def not_found(resource: str, name: str, group: str = "") -> StatusError:
    return StatusError(404, f'{qualified(resource, group)} "{name}" not found', "NotFound",
                       {"name": name, "kind": resource, **({"group": group} if group else {})})


def already_exists(resource: str, name: str, group: str = "") -> StatusError:
    return StatusError(409, f'{qualified(resource, group)} "{name}" already exists', "AlreadyExists",
                       {"name": name, "kind": resource, **({"group": group} if group else {})})


def conflict(resource: str, name: str, group: str = "") -> StatusError:
    return StatusError(
        409, f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": the object has been modified; '
             "please apply your changes to the latest version and try again", "Conflict",
        {"name": name, "kind": resource, **({"group": group} if group else {})})


def invalid(kind: str, name: str, causes: list[tuple[str, str]], group: str = "") -> StatusError:
    """422: ``Pod "x" is invalid: spec.containers[0].image: Required value`` (causes: (field, message)); the
    kind is qualified by its group (``Deployment.apps "x"``) and an empty name is left out of the details, as
    apimachinery's ``NewInvalid`` writes them."""
    text = "; ".join(f"{f}: {m}" for f, m in causes)
    if len(causes) > 1:
        text = "[" + ", ".join(f"{f}: {m}" for f, m in causes) + "]"
    details: dict = {"name": name} if name else {}
    details.update({"kind": kind, "causes": [{"reason": _cause_reason(m), "message": m, "field": f}
                                             for f, m in causes]})
    if group:
        details["group"] = group
    qualified = f"{kind}.{group}" if group else kind
    return StatusError(422, f'{qualified} "{name}" is invalid: {text}', "Invalid", details)


def _cause_reason(message: str) -> str:
    for prefix, reason in (("Required value", "FieldValueRequired"), ("Forbidden", "FieldValueForbidden"),
                           ("Duplicate value", "FieldValueDuplicate"), ("Unsupported value", "FieldValueNotSupported")):
        if message.startswith(prefix):
            return reason
    return "FieldValueInvalid"


def bad_request(message: str) -> StatusError:
    return StatusError(400, message, "BadRequest")


def forbidden(resource: str, name: str, message: str, group: str = "") -> StatusError:
    who = f'{qualified(resource, group)} "{name}"' if name else qualified(resource, group)
    details = {"kind": resource, **({"name": name} if name else {}), **({"group": group} if group else {})}
    return StatusError(403, f"{who} is forbidden: {message}", "Forbidden", details)


def unauthorized() -> StatusError:
    return StatusError(401, "Unauthorized", "Unauthorized")


def gone(message: str) -> StatusError:
    return StatusError(410, message, "Expired")
