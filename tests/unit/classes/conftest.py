"""Fixtures of the class tests: the pipeline probes' scripted stand-in for a Kubernetes API caller."""

from __future__ import annotations

from ..pipeline.conftest import fake_caller, k8s_status  # noqa: F401 - fixtures shared with the pipeline tests
