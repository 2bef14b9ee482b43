"""Service-account tokens as the API server issues them (TokenRequest) and who a request is (SelfSubjectReview).

- ``POST /api/v1/namespaces/{ns}/serviceaccounts/{name}/token`` (``authentication.k8s.io/v1`` TokenRequest,
  what ``kubectl create token`` sends) returns a bound token: a JWT whose claims follow the API server's
  (``sub`` ``system:serviceaccount:NS:NAME``, ``kubernetes.io.serviceaccount.uid``, ``exp``), signed with a key
  kept under the data directory. ``spec.expirationSeconds`` defaults to an hour and may not be under ten
  minutes (``pkg/apis/authentication/validation`` ValidateTokenRequest's message).
- A bearer token that is none of the bootstrap identities' is checked here: signature, expiry, and that the
  ServiceAccount still exists with the same uid (a deleted account's tokens stop working). It authenticates as
  the account with the groups ``system:serviceaccounts``, ``system:serviceaccounts:NS``,
  ``system:authenticated``, and ``user.extra`` ``authentication.kubernetes.io/credential-id: ["JTI=<jti>"]``.
- ``POST /apis/authentication.k8s.io/v1/selfsubjectreviews`` (``kubectl auth whoami``) answers the caller's
  user info.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
import time
from datetime import datetime, timezone
from pathlib import Path

from aiohttp import web

from gpupoc.sim.api.context import Ctx, json_response
from gpupoc.sim.api.registry import ResourceSpec
from gpupoc.sim.api.status import bad_request, invalid, not_found
from gpupoc.sim.cluster import ClusterState, Identity

ISSUER = "https://kubernetes.default.svc.cluster.local"
DEFAULT_SECONDS = 3600
MIN_SECONDS = 600
MAX_SECONDS = 1 << 32
KEY_FILE = "sa-signing.key"
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"  # user.extra of a token's identity (its JTI)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def signing_key(state: ClusterState) -> bytes:
    """The cluster's service-account signing key (created once, kept under ``<data-dir>/pki``)."""
    path = Path(state.data_dir) / "pki" / KEY_FILE
    if not path.is_file():
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as fh:
            fh.write(secrets.token_bytes(32))
    return path.read_bytes()


def mint(state: ClusterState, namespace: str, name: str, uid: str, seconds: int,
         audiences: list[str]) -> tuple[str, int]:
    """(token, expiry as a Unix time) of a token bound to the ServiceAccount ``namespace/name``."""
    now = int(time.time())
    claims = {"aud": audiences or [ISSUER], "exp": now + seconds, "iat": now, "nbf": now, "iss": ISSUER,
              "jti": secrets.token_hex(8), "sub": f"system:serviceaccount:{namespace}:{name}",
              "kubernetes.io": {"namespace": namespace, "serviceaccount": {"name": name, "uid": uid}}}
    head = _b64(json.dumps({"alg": "HS256", "typ": "JWT", "kid": "gpupoc-sim"}).encode())
    body = _b64(json.dumps(claims, separators=(",", ":")).encode())
    sig = hmac.new(signing_key(state), f"{head}.{body}".encode(), hashlib.sha256).digest()
    return f"{head}.{body}.{_b64(sig)}", now + seconds


def authenticate(state: ClusterState, token: str) -> Identity | None:
    """The ServiceAccount a minted token stands for, or None (bad signature, expired, account gone)."""
    parts = token.split(".")
    if len(parts) != 3:
        return None
    expected = hmac.new(signing_key(state), f"{parts[0]}.{parts[1]}".encode(), hashlib.sha256).digest()
    try:
        if not hmac.compare_digest(expected, _unb64(parts[2])):
            return None
        claims = json.loads(_unb64(parts[1]))
        ref = claims["kubernetes.io"]
        ns, name, uid = ref["namespace"], ref["serviceaccount"]["name"], ref["serviceaccount"]["uid"]
        if int(claims["exp"]) <= time.time():
            return None
    except (ValueError, KeyError, TypeError):
        return None
    sa = state.store.get("serviceaccounts", ns, name)
    if sa is None or sa["metadata"].get("uid") != uid:
        return None
    groups = ("system:serviceaccounts", f"system:serviceaccounts:{ns}", "system:authenticated")
    extra = {CREDENTIAL_ID: [f"JTI={claims['jti']}"]} if claims.get("jti") else None
    return Identity("", f"system:serviceaccount:{ns}:{name}", groups, uid, ns, extra)


async def create_token(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    """TokenRequest: a token for the ServiceAccount of the URL."""
    body = await ctx.body() or {}
    if not isinstance(body, dict):
        raise bad_request("the body of the request was in an unknown format")
    ns, name = ctx.info.namespace, ctx.info.name
    sa = ctx.state.store.get("serviceaccounts", ns, name)
    if sa is None:
        raise not_found("serviceaccounts", name)
    req = body.get("spec") or {}
    seconds = req.get("expirationSeconds") or DEFAULT_SECONDS
    if not isinstance(seconds, int) or seconds < MIN_SECONDS or seconds > MAX_SECONDS:
        what = "larger than 2^32 seconds" if isinstance(seconds, int) and seconds > MAX_SECONDS else \
            "less than 10 minutes"
        raise invalid("TokenRequest", "", [("spec.expirationSeconds",
                                            f"Invalid value: {seconds}: may not specify a duration {what}")],
                      "authentication.k8s.io")
    audiences = list(req.get("audiences") or [])
    token, exp = mint(ctx.state, ns, name, sa["metadata"]["uid"], seconds, audiences)
    stamp = datetime.fromtimestamp(exp, tz=timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")
    return json_response({"kind": "TokenRequest", "apiVersion": "authentication.k8s.io/v1",
                          "metadata": {"name": name, "namespace": ns, "creationTimestamp": None},
                          "spec": {"audiences": audiences or [ISSUER], "expirationSeconds": seconds,
                                   "boundObjectRef": req.get("boundObjectRef")},
                          "status": {"token": token, "expirationTimestamp": stamp}}, 201)


async def self_subject_review(ctx: Ctx, spec: ResourceSpec) -> web.Response:
    """SelfSubjectReview: who the API server takes the caller for."""
    return json_response({"kind": "SelfSubjectReview", "apiVersion": "authentication.k8s.io/v1",
                          "metadata": {"creationTimestamp": None},
                          "status": {"userInfo": ctx.caller.as_user_info()}}, 201)
