"""The device memory a workload allocates on a simulated card: the driver's book of every process on the card,
and HAMi-core's per-container limit in front of it.

- Driver (``GPUPOC_GPU_LEDGER_DIR``, ``GPUPOC_GPU_MEMORY_MIB_<i>``, set by the simulated kubelet): one ledger
  file per card UUID, shared by every process that sees the card, entries by process id (a dead process's
  memory is freed, as the driver frees it). An allocation past the card's memory fails with
  ``CUDA_ERROR_OUT_OF_MEMORY``; nothing else stops one process taking the card (time-slicing: NVIDIA's
  k8s-device-plugin README says each workload "has access to the GPU memory and runs in the same fault-domain").
- HAMi-core (Project-HAMi/HAMi-core ``src/allocator/allocator.c`` ``oom_check``): with
  ``CUDA_DEVICE_MEMORY_LIMIT_<i>`` (``"3000m"``) an allocation that would take the container past its limit
  fails with ``CUDA_ERROR_OUT_OF_MEMORY`` and logs ``[HAMI-core ERROR (pid:%d thread=%ld %s:%d)]: Device %d
  OOM %lu / %lu`` (bytes after the allocation / limit bytes) on stderr; ``cuMemGetInfo`` reports the limit as
  the card's total.
"""

from __future__ import annotations

import fcntl
import json
import os
import sys
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator, Mapping

from gpupoc.common.processes import process_running

MIB = 2**20
OUT_OF_MEMORY = "CUDA_ERROR_OUT_OF_MEMORY"
OOM_CHECK_AT = "allocator.c:60"  # where HAMi-core's oom_check logs


class CudaError(RuntimeError):
    """A CUDA driver call failed; ``code`` is the CUresult name."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(f"{code}: {message}")
        self.code = code


@dataclass(frozen=True)
class Device:
    index: int
    uuid: str
    total_mib: int
    limit_mib: int | None  # HAMi-core's limit for this container, None without HAMi-core


def parse_limit(value: str | None) -> int | None:
    """``CUDA_DEVICE_MEMORY_LIMIT_<i>``: ``"3000m"`` is MiB, ``"3g"`` GiB, a bare number bytes."""
    if not value:
        return None
    v = value.strip().lower()
    try:
        if v.endswith("m"):
            return int(float(v[:-1]))
        if v.endswith("g"):
            return int(float(v[:-1]) * 1024)
        return int(v) // MIB
    except ValueError:
        return None


def devices_from_env(env: Mapping[str, str]) -> list[Device]:
    uuids = [u for u in env.get("NVIDIA_VISIBLE_DEVICES", "").split(",") if u.startswith(("GPU-", "MIG-"))]
    return [Device(i, u, int(env.get(f"GPUPOC_GPU_MEMORY_MIB_{i}", "0") or 0),
                   parse_limit(env.get(f"CUDA_DEVICE_MEMORY_LIMIT_{i}"))) for i, u in enumerate(uuids)]


def read_ledger(path: Path) -> dict[str, dict]:
    """The card's ledger: pid -> {"mib", "owner"}, live processes only."""
    try:
        table = json.loads(path.read_text() or "{}")
    except (OSError, ValueError):
        return {}
    return {pid: e for pid, e in table.items() if pid.isdigit() and process_running(int(pid))}


class Context:
    """This process's device memory on its visible cards."""

    def __init__(self, env: Mapping[str, str], owner: str) -> None:
        self.devices = devices_from_env(env)
        ledger = env.get("GPUPOC_GPU_LEDGER_DIR")
        self.ledger_dir = Path(ledger) if ledger else None
        self.owner = owner
        self.pid = str(os.getpid())

    @contextmanager
    def _book(self, dev: Device) -> Iterator[dict[str, dict]]:
        if self.ledger_dir is None:
            raise CudaError("CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected")
        path = self.ledger_dir / f"{dev.uuid}.json"
        with open(self.ledger_dir / f".{dev.uuid}.lock", "a") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            table = read_ledger(path)
            yield table
            tmp = path.with_name(f".{path.name}.{self.pid}.tmp")
            tmp.write_text(json.dumps(table))
            os.replace(tmp, path)

    def used_mib(self, dev: Device) -> int:
        if self.ledger_dir is None:
            return 0
        return int(read_ledger(self.ledger_dir / f"{dev.uuid}.json").get(self.pid, {}).get("mib", 0))

    def mem_alloc(self, dev: Device, mib: int) -> None:
        """``cuMemAlloc``: book ``mib`` on ``dev`` or raise ``CudaError(CUDA_ERROR_OUT_OF_MEMORY)``."""
        with self._book(dev) as table:
            mine = int(table.get(self.pid, {}).get("mib", 0))
            if dev.limit_mib is not None and mine + mib > dev.limit_mib:
                print(f"[HAMI-core ERROR (pid:{self.pid} thread={threading.get_ident()} {OOM_CHECK_AT})]: "
                      f"Device {dev.index} OOM {(mine + mib) * MIB} / {dev.limit_mib * MIB}", file=sys.stderr,
                      flush=True)
                raise CudaError(OUT_OF_MEMORY, "out of memory")
            if sum(int(e.get("mib", 0)) for e in table.values()) + mib > dev.total_mib:
                raise CudaError(OUT_OF_MEMORY, "out of memory")
            table[self.pid] = {"mib": mine + mib, "owner": self.owner}

    def mem_get_info(self, dev: Device) -> tuple[int, int]:
        """``cuMemGetInfo`` in MiB: (free, total); under HAMi-core the total is the container's limit."""
        mine = self.used_mib(dev)
        if dev.limit_mib is not None:
            return max(0, dev.limit_mib - mine), dev.limit_mib
        assert self.ledger_dir is not None
        used = sum(int(e.get("mib", 0)) for e in read_ledger(self.ledger_dir / f"{dev.uuid}.json").values())
        return max(0, dev.total_mib - used), dev.total_mib

    def release(self) -> None:
        """Free everything this process holds (the driver does so when a process exits)."""
        for dev in self.devices:
            if self.ledger_dir is not None:
                with self._book(dev) as table:
                    table.pop(self.pid, None)
