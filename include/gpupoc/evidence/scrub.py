"""Keep secrets out of evidence: redact token-like keys and values before anything is written.

Evidence is read by reviewers and kept for months; a bearer token, a password or a kubeconfig in it
would hand out cluster access. ``scrub`` walks dicts and lists; ``scrub_text`` handles one string.
"""

from __future__ import annotations

import re
from functools import lru_cache
from typing import Any

import orjson

REDACTED = "[REDACTED]"

SENSITIVE_KEY = re.compile(
    r"(token|password|passwd|secret|credential|api[-_]?key|authorization|kubeconfig|kube[-_]?config|"
    r"client[-_]?key|private[-_]?key|cookie|bearer)",
    re.IGNORECASE,
)
# keys that merely mention a sensitive word but hold no secret
_SAFE_KEYS = {"secrets_readable", "resource", "kind", "action", "token_count"}

_BEARER = re.compile(r"(?i)\b(bearer|basic)\s+[A-Za-z0-9\-._~+/]+=*")
_JWT = re.compile(r"\beyJ[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]{5,}\.[A-Za-z0-9_-]*")
_PEM = re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?(-----END [A-Z ]*PRIVATE KEY-----|$)", re.DOTALL)
_KEY_VALUE = re.compile(
    r"(?i)(\b(?:token|access[-_]?token|id[-_]?token|refresh[-_]?token|password|passwd|api[-_]?key|"
    r"client-key-data|client-certificate-data|secret[-_]?key)\b[\"']?\s*[:=]\s*[\"']?)([^\s\"',;}]+)"
)
_KUBECONFIG = re.compile(r"(?s)(kind:\s*Config\b.*(clusters|users):)|((clusters|users):.*kind:\s*Config\b)")
_SECRET_KINDS = ("Secret", "SecretList")


# every pattern above needs one of these words, whatever their case: a text without any is left as it is (searched
# in the lowered text: four times as fast as an IGNORECASE pattern)
_TRIGGER = re.compile(r"bearer|basic|eyj|-----begin|token|password|passwd|api|client-|secret|config")


def scrub_text(text: str) -> str:
    """``text`` with bearer tokens, JWTs, private keys, ``token: x`` values and kubeconfigs redacted."""
    if not text or not _may_hold_secret(text):
        return text
    if _KUBECONFIG.search(text):
        return f"{REDACTED} (kubeconfig content)"
    text = _PEM.sub(f"{REDACTED} (private key)", text)
    text = _BEARER.sub(lambda m: f"{m.group(1)} {REDACTED}", text)
    text = _JWT.sub(REDACTED, text)
    return _KEY_VALUE.sub(lambda m: m.group(1) + REDACTED, text)


def _may_hold_secret(text: str) -> bool:
    """Whether any pattern could match ``text`` (most of a pod's strings hold none of their words)."""
    return _TRIGGER.search(text.lower()) is not None


@lru_cache(maxsize=4096)
def is_sensitive_key(key: str) -> bool:
    return key not in _SAFE_KEYS and bool(SENSITIVE_KEY.search(key))


# every word ``scrub`` acts on, in a string or in a key: ``_TRIGGER``'s (its ``api`` narrowed to ``api-key``, since
# every Kubernetes object says ``apiVersion``) and ``SENSITIVE_KEY``'s; looked for one by one (10,000 pods: 0.4 s,
# against 0.6 s for one regular expression of them all)
_ANY_WORD = (b"bearer", b"basic", b"eyj", b"-----begin", b"token", b"passw", b"apikey", b"api-key", b"api_key",
             b"client", b"secret", b"config", b"credential", b"authorization", b"cookie", b"private")


def says_nothing_secret(obj: Any) -> bool:
    """Whether ``scrub(obj)`` would return ``obj`` unchanged, known without walking it: ``obj`` as compact JSON
    (C speed) is ASCII and holds none of the words any redaction needs. False whenever that cannot be told (a
    key that is not a plain string, a value JSON cannot hold): ``scrub`` then decides."""
    try:
        text = orjson.dumps(obj, option=orjson.OPT_PASSTHROUGH_SUBCLASS)
    except TypeError:
        return False
    if not text.isascii():
        return False
    lowered = text.lower()
    return not any(word in lowered for word in _ANY_WORD)


def scrub(obj: Any) -> Any:
    """A copy of ``obj`` with sensitive keys' values and token-like strings redacted.

    Kubernetes Secret objects keep their metadata but lose ``data`` and ``stringData`` values.
    """
    if isinstance(obj, str):  # the commonest leaf first: a wave's pods and events are millions of them
        return obj if _TRIGGER.search(obj.lower()) is None else scrub_text(obj)
    if isinstance(obj, dict):
        if obj.get("kind") in _SECRET_KINDS:
            return _scrub_secret(obj)
        return {k: REDACTED if _redacted(k, v) else scrub(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [scrub(v) for v in obj]
    return obj


def _redacted(key: Any, value: Any) -> bool:
    """Whether ``value`` is held under a sensitive key and says something."""
    return is_sensitive_key(str(key)) and value not in (None, "", [], {}) and not isinstance(value, bool)


def _scrub_secret(obj: dict) -> dict:
    """A Secret (or SecretList): its metadata kept, every value of its data redacted."""
    out = {}
    for k, v in obj.items():
        key = str(k)
        if key in ("data", "stringData") and isinstance(v, dict):
            out[k] = {dk: REDACTED for dk in v}
        elif key == "items" and isinstance(v, list):
            out[k] = [scrub({**i, "kind": "Secret"}) if isinstance(i, dict) else scrub(i) for i in v]
            for item, orig in zip(out[k], v):
                if isinstance(item, dict) and isinstance(orig, dict) and "kind" not in orig:
                    item.pop("kind", None)
        else:
            out[k] = REDACTED if _redacted(k, v) else scrub(v)
    return out
