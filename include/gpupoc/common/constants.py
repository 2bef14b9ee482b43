"""Names the pipeline, the pod builder and the probes share."""

GPU = "nvidia.com/gpu"
GPUMEM = "nvidia.com/gpumem"  # HAMi: MiB of each vGPU (Project-HAMi/HAMi chart values.yaml)
GPUMEM_PERCENTAGE = "nvidia.com/gpumem-percentage"  # HAMi: percent of the card's memory
GPUCORES = "nvidia.com/gpucores"  # HAMi: percent of the card's SMs
# The ResourceQuota key that limits a namespace's GPUs (requests of pending and running pods count).
GPU_QUOTA_KEY = f"requests.{GPU}"
# The scheduling gate the pipeline owns: pods are created held by it, the release task lifts it for all.
PIPELINE_GATE = "gpupoc.io/wave-release"
# Annotation the release task writes on each pod: when its gate was lifted (kept across task reruns).
RELEASED_AT = "gpupoc.io/released-at"
