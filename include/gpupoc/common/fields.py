"""Constrained field types of the POC plan and the models built on it, with messages that say what is expected.

``error_lines`` appends ``, got <value>`` to each message, so a negative quota reads
``tenants[1].quota.gpus: expected a positive integer, got -4``.
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation
from typing import Annotated
from urllib.parse import urlsplit

from pydantic import BaseModel, BeforeValidator, ConfigDict

DNS_LABEL_RE = re.compile(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$")
QUANTITY_RE = re.compile(r"^([0-9]+(\.[0-9]+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei)?$")
_SUFFIX = {
    "": 1, "m": Decimal("0.001"), "k": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
    "Ki": 2**10, "Mi": 2**20, "Gi": 2**30, "Ti": 2**40, "Pi": 2**50, "Ei": 2**60,
}


class StrictModel(BaseModel):
    """Base of every plan model: unknown keys are errors, instances are immutable."""

    model_config = ConfigDict(extra="forbid", frozen=True)


def _is_int(v: object) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _positive_int(v: object) -> int:
    if not _is_int(v) or v <= 0:
        raise ValueError("expected a positive integer")
    return v


def _non_negative_int(v: object) -> int:
    if not _is_int(v) or v < 0:
        raise ValueError("expected an integer >= 0")
    return v


def _positive_number(v: object) -> float:
    if not (_is_int(v) or isinstance(v, float)) or v <= 0:
        raise ValueError("expected a positive number")
    return float(v)


def _non_negative_number(v: object) -> float:
    if not (_is_int(v) or isinstance(v, float)) or v < 0:
        raise ValueError("expected a number >= 0")
    return float(v)


def _ratio(v: object) -> float:
    if not (_is_int(v) or isinstance(v, float)) or not 0 <= v <= 1:
        raise ValueError("expected a ratio between 0 and 1")
    return float(v)


def _dns_label(v: object) -> str:
    if not isinstance(v, str) or len(v) > 63 or not DNS_LABEL_RE.match(v):
        raise ValueError("expected a DNS label (lower-case letters, digits and '-', at most 63 characters)")
    return v


def _quantity(v: object) -> str:
    if _is_int(v):
        v = str(v)
    if not isinstance(v, str) or not QUANTITY_RE.match(v):
        raise ValueError("expected a Kubernetes quantity such as '500m', '2', '512Mi' or '4Gi'")
    return v


def _service_url(v: object) -> str:
    if not isinstance(v, str):
        raise ValueError("expected an http:// or https:// URL such as 'http://prometheus:9090'")
    if "://" not in v:
        raise ValueError(f"expected an http:// or https:// URL with its scheme, such as 'http://{v}'")
    parts = urlsplit(v)
    if parts.scheme not in ("http", "https"):
        raise ValueError(f"expected an http:// or https:// URL, not {parts.scheme}://")
    if not parts.hostname:
        raise ValueError("expected a host after the scheme, such as 'http://prometheus:9090'")
    try:
        parts.port  # noqa: B018 - raises when the port is not a number from 0 to 65535
    except ValueError:
        raise ValueError("expected a port from 1 to 65535 after the host, such as 'http://prometheus:9090'") from None
    return v


PositiveInt = Annotated[int, BeforeValidator(_positive_int)]
NonNegativeInt = Annotated[int, BeforeValidator(_non_negative_int)]
PositiveNumber = Annotated[float, BeforeValidator(_positive_number)]
NonNegativeNumber = Annotated[float, BeforeValidator(_non_negative_number)]
Ratio = Annotated[float, BeforeValidator(_ratio)]
DnsLabel = Annotated[str, BeforeValidator(_dns_label)]
Quantity = Annotated[str, BeforeValidator(_quantity)]
ServiceUrl = Annotated[str, BeforeValidator(_service_url)]


def quantity_value(q: str) -> Decimal:
    """The numeric value of a Kubernetes quantity ('512Mi' -> 536870912, '500m' -> 0.5)."""
    m = QUANTITY_RE.match(str(q))
    if not m:
        raise ValueError(f"not a Kubernetes quantity: {q!r}")
    try:
        return Decimal(m.group(1)) * Decimal(_SUFFIX[m.group(3) or ""])
    except InvalidOperation as exc:  # pragma: no cover - the regex admits only decimals
        raise ValueError(f"not a Kubernetes quantity: {q!r}") from exc
