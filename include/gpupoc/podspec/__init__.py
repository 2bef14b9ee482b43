"""Pod specs for workloads: one pure builder, per-adapter decoration, operator arguments and the wave gate."""

from gpupoc.podspec.build import BASE_CONTAINER, GPU, build_pod

from gpupoc.common.constants import PIPELINE_GATE
from gpupoc.podspec.gates import is_gated, release_gate_json_patch, release_gate_patch
from gpupoc.podspec.kpo import identity_kwargs, kpo_kwargs, startup_timeout_seconds
from gpupoc.podspec.labels import safe_label_value

__all__ = [
    "BASE_CONTAINER", "GPU", "PIPELINE_GATE", "build_pod", "identity_kwargs", "is_gated", "kpo_kwargs",
    "release_gate_json_patch", "release_gate_patch", "safe_label_value", "startup_timeout_seconds",
]
