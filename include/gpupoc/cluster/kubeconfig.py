"""``gpupoc cluster kubeconfig``: one context per identity of the plan, each with a bound token from
``kubectl create token`` lasting the plan's window.

The runner's context is named ``platform.admin_context`` and each tenant's ``tenants[].context``, so the plan
works unchanged against the file. The cluster entry (server, CA) is the administrator's, from
``kubectl config view --raw --minify``. Tokens go only into the file (mode 0600), never to the terminal.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

import yaml

from gpupoc.exceptions import ConfigError, SourceUnavailable, ToolMissing

MIN_SECONDS = 600  # the API server refuses shorter tokens
CLUSTER_NAME = "gpupoc"


@dataclass(frozen=True)
class Identity:
    """One context to write: who, and which ServiceAccount stands for it."""

    context: str
    namespace: str
    service_account: str

    @property
    def username(self) -> str:
        return f"system:serviceaccount:{self.namespace}:{self.service_account}"


def identities(plan) -> list[Identity]:
    """The runner, then every tenant."""
    out = [Identity(plan.platform.admin_context or "gpupoc-runner", plan.platform.namespace,
                    plan.cluster.runner_service_account)]
    out += [Identity(t.kube_context, t.namespace, t.service_account) for t in plan.tenants]
    return out


@dataclass
class KubectlAdmin:
    """Real ``kubectl`` as the administrator (``kubeconfig``/``context`` None: kubectl's own defaults)."""

    kubeconfig: str | None = None
    context: str | None = None
    timeout: float = 60.0

    def _base(self) -> list[str]:
        from gpupoc.controlplane.binaries import kubectl_command

        # the machine's kubectl, else the built one: the simulated cluster cannot read the protobuf TokenRequest
        # that `kubectl create token` of v1.37 posts (docs/simulated-cluster.md, limits)
        exe = shutil.which("kubectl") or shutil.which(kubectl_command())
        if exe is None:
            raise ToolMissing("kubectl is not installed", "install kubectl (https://kubernetes.io/docs/tasks/tools/) "
                              "or run `make control-plane`, which builds it")
        return [exe, *([f"--kubeconfig={self.kubeconfig}"] if self.kubeconfig else []),
                *([f"--context={self.context}"] if self.context else [])]

    def run(self, *args: str, stdin: str | None = None) -> str:
        cmd = self._base() + list(args)
        try:
            res = subprocess.run(cmd, capture_output=True, text=True, timeout=self.timeout, input=stdin)
        except subprocess.TimeoutExpired:
            raise SourceUnavailable("kubectl " + " ".join(args[:3]), f"no answer within {self.timeout:g} s",
                                    "check that the administrator's kubeconfig points at a reachable cluster") from None
        if res.returncode != 0:
            what = res.stderr.strip()[-500:] or f"exit {res.returncode}"
            raise SourceUnavailable("kubectl " + " ".join(args[:3]), what,
                                    "run it as a cluster administrator (--admin-kubeconfig, --admin-context) after "
                                    "`kubectl apply -f` of `gpupoc cluster manifests`")
        return res.stdout

    def apply(self, manifests: str) -> str:
        """``kubectl apply -f -``: what kubectl printed (one line per object)."""
        return self.run("apply", "-f", "-", stdin=manifests)

    def create_token(self, namespace: str, service_account: str, seconds: int) -> str:
        return self.run("create", "token", service_account, "-n", namespace, f"--duration={seconds}s").strip()

    def cluster_entry(self) -> dict:
        """The administrator's cluster (server, CA as data) from ``kubectl config view --raw --minify``."""
        view = json.loads(self.run("config", "view", "--raw", "--minify", "-o", "json") or "{}")
        clusters = view.get("clusters") or []
        if not clusters:
            raise ConfigError(str(self.kubeconfig or "kubeconfig"), ["clusters: the administrator's context names "
                                                                     "no cluster; pass --admin-context"])
        entry = dict(clusters[0].get("cluster") or {})
        ca_file = entry.pop("certificate-authority", None)
        if ca_file and "certificate-authority-data" not in entry:
            entry["certificate-authority-data"] = base64.b64encode(Path(ca_file).read_bytes()).decode()
        return entry


def token_seconds(plan, now: datetime | None = None) -> int:
    """``cluster.token_hours``, else until the window's end plus a day; never under ten minutes."""
    if plan.cluster.token_hours is not None:
        return max(MIN_SECONDS, int(plan.cluster.token_hours * 3600))
    now = now or datetime.now(timezone.utc)
    end = plan.window.aware(plan.window.end)
    return max(MIN_SECONDS, int((end + timedelta(days=1) - now).total_seconds()))


def token_expiry(token: str) -> datetime | None:
    """The ``exp`` claim of a JWT (read, not verified: the API server verifies), None when it has none."""
    try:
        payload = token.split(".")[1]
        claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
        return datetime.fromtimestamp(int(claims["exp"]), tz=timezone.utc)
    except (IndexError, ValueError, KeyError, TypeError):
        return None


@dataclass
class KubeconfigResult:
    path: Path
    window_end: datetime
    contexts: list[tuple[Identity, datetime | None]] = field(default_factory=list)

    def lines(self) -> list[str]:
        out = [f"wrote {self.path} (mode 0600): {len(self.contexts)} contexts"]
        for ident, exp in self.contexts:
            until = exp.isoformat() if exp else "unknown expiry"
            short = exp is not None and exp < self.window_end
            out.append(f"  {ident.context}: {ident.username}, token valid until {until}"
                       + ("  (ends before the window does: the API server capped it "
                          "(--service-account-max-token-expiration); run this again before then)" if short else ""))
        return out


def kubeconfig_dict(cluster: dict, tokens: list[tuple[Identity, str]], current: str) -> dict:
    return {"apiVersion": "v1", "kind": "Config", "preferences": {},
            "clusters": [{"name": CLUSTER_NAME, "cluster": cluster}],
            "users": [{"name": i.context, "user": {"token": tok}} for i, tok in tokens],
            "contexts": [{"name": i.context, "context": {"cluster": CLUSTER_NAME, "user": i.context,
                                                        "namespace": i.namespace}} for i, _ in tokens],
            "current-context": current}


def write_plan_kubeconfig(plan, admin: KubectlAdmin, out: Path | None = None, server: str | None = None,
                          now: datetime | None = None) -> KubeconfigResult:
    """Mint every identity's token and write the kubeconfig (``out``, else the plan's platform.kubeconfig)."""
    path = Path(out) if out else plan.kubeconfig_path
    if path is None:
        raise ConfigError("--out", ["(option): the plan names no platform.kubeconfig; pass --out PATH"])
    cluster = admin.cluster_entry()
    if server:
        cluster["server"] = server
        if server.startswith("http://"):
            cluster.pop("certificate-authority-data", None)
    seconds = token_seconds(plan, now)
    tokens = [(i, admin.create_token(i.namespace, i.service_account, seconds)) for i in identities(plan)]
    text = yaml.safe_dump(kubeconfig_dict(cluster, tokens, tokens[0][0].context), sort_keys=False)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w", encoding="utf-8") as fh:
        fh.write(text)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)
    result = KubeconfigResult(path, plan.window.aware(plan.window.end))
    result.contexts = [(i, token_expiry(tok)) for i, tok in tokens]
    return result
