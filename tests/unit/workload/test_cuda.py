"""The workload's device memory: the driver's per-card book shared by processes, HAMi-core's limit in front."""

from __future__ import annotations

import os

import pytest

from gpupoc.workload.cuda import Context, CudaError, OUT_OF_MEMORY, parse_limit, read_ledger

UUID = "GPU-11111111-2222-3333-4444-555555555555"


def context(tmp_path, pid: int, limit: str | None = None, total: int = 10000) -> Context:
    env = {"NVIDIA_VISIBLE_DEVICES": UUID, "GPUPOC_GPU_LEDGER_DIR": str(tmp_path),
           "GPUPOC_GPU_MEMORY_MIB_0": str(total)}
    if limit:
        env["CUDA_DEVICE_MEMORY_LIMIT_0"] = limit
    ctx = Context(env, f"ns/pod-{pid}")
    ctx.pid = str(pid)
    return ctx


def live_pids(n: int) -> list[int]:
    """Pids of live processes (ledger entries of dead ones are dropped): this one and its parent."""
    return [os.getpid(), os.getppid()][:n]


def test_parse_limit_reads_hamis_units():
    assert parse_limit("3000m") == 3000 and parse_limit("2g") == 2048 and parse_limit(str(2**30)) == 1024
    assert parse_limit("") is None and parse_limit("lots") is None


def test_hami_core_refuses_past_the_limit_and_logs_its_line(tmp_path, capsys):
    me, neighbour = live_pids(2)
    mine, theirs = context(tmp_path, me, "3000m"), context(tmp_path, neighbour, "3000m")
    theirs.mem_alloc(theirs.devices[0], 2000)
    mine.mem_alloc(mine.devices[0], 2816)
    with pytest.raises(CudaError) as err:
        mine.mem_alloc(mine.devices[0], 256)
    assert err.value.code == OUT_OF_MEMORY
    line = capsys.readouterr().err.strip()
    assert line.startswith(f"[HAMI-core ERROR (pid:{me} thread=")
    assert line.endswith(f"allocator.c:60)]: Device 0 OOM {3072 * 2**20} / {3000 * 2**20}")
    assert mine.used_mib(mine.devices[0]) == 2816 and theirs.used_mib(theirs.devices[0]) == 2000
    assert mine.mem_get_info(mine.devices[0]) == (184, 3000)


def test_without_hami_core_one_process_takes_the_card_from_its_neighbour(tmp_path, capsys):
    me, neighbour = live_pids(2)
    greedy, victim = context(tmp_path, me), context(tmp_path, neighbour)
    victim.mem_alloc(victim.devices[0], 2000)
    greedy.mem_alloc(greedy.devices[0], 8000)  # far past any share: nothing stops it
    with pytest.raises(CudaError):
        victim.mem_alloc(victim.devices[0], 256)  # the neighbour runs out
    assert "HAMI-core" not in capsys.readouterr().err
    assert greedy.mem_get_info(greedy.devices[0]) == (0, 10000)


def test_release_and_dead_processes_free_their_memory(tmp_path):
    ctx = context(tmp_path, os.getpid())
    ctx.mem_alloc(ctx.devices[0], 1000)
    ghost = context(tmp_path, 2**22 + 12345)  # no such process
    ghost.pid = str(2**22 + 12345)
    (tmp_path / f"{UUID}.json").write_text('{"%s": {"mib": 5000, "owner": "x"}, "%d": {"mib": 1000, "owner": "y"}}'
                                           % (ghost.pid, os.getpid()))
    assert list(read_ledger(tmp_path / f"{UUID}.json")) == [str(os.getpid())]
    ctx.release()
    assert read_ledger(tmp_path / f"{UUID}.json") == {}


def test_no_ledger_is_no_device(tmp_path):
    ctx = Context({"NVIDIA_VISIBLE_DEVICES": UUID}, "ns/p")
    with pytest.raises(CudaError) as err:
        ctx.mem_alloc(ctx.devices[0], 1)
    assert err.value.code == "CUDA_ERROR_NO_DEVICE"
