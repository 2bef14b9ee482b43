"""Names the pipeline, the pod builder and the probes share."""

GPU = "nvidia.com/gpu"
# The ResourceQuota key that limits a namespace's GPUs (requests of pending and running pods count).
GPU_QUOTA_KEY = f"requests.{GPU}"
# The scheduling gate the pipeline owns: pods are created held by it, the release task lifts it for all.
PIPELINE_GATE = "gpupoc.io/wave-release"
# Annotation the release task writes on each pod: when its gate was lifted (kept across task reruns).
RELEASED_AT = "gpupoc.io/released-at"
