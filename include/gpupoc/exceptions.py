"""Project exceptions. Each message says what failed, the offending value, and the fix."""

from __future__ import annotations


class GpupocError(Exception):
    """Base class of every error this project raises on purpose."""


class ConfigError(GpupocError):
    """A configuration file (cluster config, POC plan) is invalid.

    ``errors`` holds one ``"path: message"`` line per problem, so callers can list them all.
    """

    def __init__(self, source: str, errors: list[str]):
        self.source = source
        self.errors = list(errors)
        lines = "\n".join(f"  - {e}" for e in self.errors)
        super().__init__(f"{source}: {len(self.errors)} error(s)\n{lines}")


class SourceUnavailable(GpupocError):
    """An evidence source (API server, Prometheus, audit log) could not be reached or answered nothing."""

    def __init__(self, endpoint: str, reason: str, fix: str = ""):
        self.endpoint = endpoint
        self.reason = reason
        self.fix = fix
        msg = f"{endpoint}: {reason}"
        if fix:
            msg += f" (fix: {fix})"
        super().__init__(msg)


class ComponentExited(GpupocError):
    """Airflow components exited while the deployment was starting; ``names`` lists them."""

    def __init__(self, names: list[str], log_tails: dict[str, str] | None = None):
        self.names = list(names)
        self.log_tails = dict(log_tails or {})
        tails = "".join(f"\n--- last lines of logs/{n}.out ---\n{t}" for n, t in self.log_tails.items() if t)
        super().__init__(f"Airflow component(s) exited during start-up: {', '.join(self.names)}; "
                         f"see $AIRFLOW_HOME/logs/<component>.out{tails}")


class ApiError(GpupocError):
    """A Kubernetes-style API answer that is not a success; keeps status and body."""

    def __init__(self, status: int, body: dict | str, endpoint: str = ""):
        self.status = status
        self.body = body
        self.endpoint = endpoint
        message = body.get("message") if isinstance(body, dict) else str(body)
        super().__init__(f"{endpoint or 'API'} answered {status}: {message}")


class PrerequisiteMissing(GpupocError):
    """The preflight found what a test class needs missing; ``missing`` names each piece with its fix."""

    def __init__(self, test_class: str, missing: list[str]):
        self.test_class = test_class
        self.missing = list(missing)
        lines = "".join(f"\n  - {m}" for m in self.missing)
        super().__init__(f"test class {test_class}: {len(self.missing)} prerequisite(s) missing, nothing was "
                         f"submitted (its items are reported not verified):{lines}")


class ValidationFailed(GpupocError):
    """A Great Expectations validation failed; names the failed checks and where the full result is."""

    def __init__(self, suite: str, failed_checks: list[str], result_path: str):
        self.suite = suite
        self.failed_checks = list(failed_checks)
        self.result_path = result_path
        super().__init__(
            f"suite {suite}: {len(self.failed_checks)} check(s) failed: {', '.join(self.failed_checks)}; "
            f"full result: {result_path}"
        )


class ToolMissing(GpupocError):
    """A program or installed asset the step needs is not on this machine; names it and how to install it."""

    def __init__(self, what: str, fix: str):
        self.what = what
        self.fix = fix
        super().__init__(f"{what} (fix: {fix})")


class ComparisonRefused(GpupocError):
    """Evidence that cannot be put side by side (other plans, changed files, a bad label); names what differs
    and the fix."""
