"""HAMi's vocabulary, as Project-HAMi/HAMi (read at v2.x) names it: its scheduler, the annotations it writes on
pods and nodes and reads from users (``pkg/util/types.go``, ``pkg/device/nvidia/device.go``), its card-fit reason
words (``pkg/device/common/common.go``) and its event reasons (``pkg/scheduler/event.go``). The simulated
cluster's HAMi writes them; the pipeline's probes and the preflight read them on any cluster."""

import json

SCHEDULER_NAME = "hami-scheduler"
DEVICE_TYPE = "NVIDIA"

# annotations HAMi writes on the pod
ASSIGNED_NODE = "hami.io/vgpu-node"
ASSIGNED_TIME = "hami.io/vgpu-time"
TO_ALLOCATE = "hami.io/vgpu-devices-to-allocate"
ALLOCATED = "hami.io/vgpu-devices-allocated"
BIND_TIME = "hami.io/bind-time"
BIND_PHASE = "hami.io/bind-phase"
# annotations a user sets
USE_GPUTYPE = "nvidia.com/use-gputype"
NOUSE_GPUTYPE = "nvidia.com/nouse-gputype"
USE_GPUUUID = "nvidia.com/use-gpuuuid"
NOUSE_GPUUUID = "nvidia.com/nouse-gpuuuid"
GPU_POLICY = "hami.io/gpu-scheduler-policy"
NODE_POLICY = "hami.io/node-scheduler-policy"
# node registration
NODE_REGISTER = "hami.io/node-nvidia-register"
NODE_HANDSHAKE = "hami.io/node-handshake"

# reason words (pkg/device/common/common.go)
CARD_TYPE_MISMATCH = "CardTypeMismatch"
CARD_UUID_MISMATCH = "CardUuidMismatch"
CARD_TIME_SLICING_EXHAUSTED = "CardTimeSlicingExhausted"
CARD_COMPUTE_UNITS_EXHAUSTED = "CardComputeUnitsExhausted"
CARD_INSUFFICIENT_MEMORY = "CardInsufficientMemory"
CARD_INSUFFICIENT_CORE = "CardInsufficientCore"
CARD_NOT_HEALTH = "CardNotHealth"
EXCLUSIVE_CONFLICT = "ExclusiveDeviceAllocateConflict"
NODE_INSUFFICIENT_DEVICE = "NodeInsufficientDevice"
ALLOCATED_CARDS_INSUFFICIENT = "AllocatedCardsInsufficientRequest"

FILTERING_FAILED = "FilteringFailed"
FILTERING_SUCCEED = "FilteringSucceed"
BINDING_FAILED = "BindingFailed"
BINDING_SUCCEED = "BindingSucceed"


def registered_cards(node: dict) -> dict[str, int]:
    """Card UUID -> its memory (MiB) from HAMi's registration: the JSON list (``id``, ``devmem``) of the current
    device plugin, or the older ``UUID,count,devmem,devcore,type,numa,health:`` list."""
    raw = ((node.get("metadata") or {}).get("annotations") or {}).get(NODE_REGISTER) or ""
    try:
        listed = json.loads(raw)
    except ValueError:
        listed = None
    if isinstance(listed, list):
        return {str(d.get("id")): int(d.get("devmem") or 0) for d in listed if isinstance(d, dict) and d.get("id")}
    out = {}
    for item in raw.split(":"):
        parts = item.split(",")
        if len(parts) >= 3 and parts[0]:
            out[parts[0]] = _mib(parts[2])
    return out


def _mib(value: str) -> int:
    try:
        return int(value)
    except ValueError:
        return 0
