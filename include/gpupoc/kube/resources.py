"""Resource names of the GPU devices (NVIDIA's device plugin, HAMi's vGPUs) and the quota key that limits them."""

GPU = "nvidia.com/gpu"
GPUMEM = "nvidia.com/gpumem"  # HAMi: MiB of each vGPU (Project-HAMi/HAMi chart values.yaml)
GPUMEM_PERCENTAGE = "nvidia.com/gpumem-percentage"  # HAMi: percent of the card's memory
GPUCORES = "nvidia.com/gpucores"  # HAMi: percent of the card's SMs
# The ResourceQuota key that limits a namespace's GPUs (requests of pending and running pods count).
GPU_QUOTA_KEY = f"requests.{GPU}"
