"""Process-wide CPU tuning for inference: thread count and glibc's allocator.

PyTorch on CPU allocates every activation with ``malloc``; glibc serves blocks over 128 KiB with
fresh ``mmap`` pages, so each large activation is page-faulted in again on every call. Raising the
mmap and trim thresholds lets freed blocks be reused, which speeds up batched sampling (see
docs/performance.md). Call :func:`tune_cpu` once at start-up (the app and the benchmark do);
the library never calls it on import.
"""

from __future__ import annotations

import ctypes
import ctypes.util
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from functools import lru_cache
from typing import TypeVar

import torch

from uqcore.exceptions import ConfigError

T = TypeVar("T")
R = TypeVar("R")

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_M_ARENA_MAX = -8
_ARENAS = 2  # one per core: threads share them, so at most two heaps keep freed memory
_MMAP_BYTES = 32 << 20  # blocks below 32 MiB come from the heap and are reused
_TRIM_BYTES = 256 << 20  # keep up to 256 MiB of freed heap before returning it to the OS


def _libc() -> ctypes.CDLL | None:
    """The C library, or None where there is none to load."""
    name = ctypes.util.find_library("c")
    try:
        return ctypes.CDLL(name) if name else None
    except OSError:
        return None


def tune_allocator() -> bool:
    """Serve blocks below 32 MiB from glibc's heap and keep up to 256 MiB of it free for reuse,
    in at most two heaps (arenas): glibc otherwise opens up to 8 per core for the threads of a
    server (Streamlit runs each script run in a new thread), and each may keep 256 MiB.
    Returns False where glibc's ``mallopt`` is absent."""
    libc = _libc()
    if libc is None:
        return False
    try:
        ok = libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_BYTES) == 1
        ok = ok and libc.mallopt(_M_ARENA_MAX, _ARENAS) == 1
        return bool(ok and libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_BYTES) == 1)
    except (OSError, AttributeError):
        return False


def release_memory() -> bool:
    """Give the heap's free memory back to the OS (glibc's ``malloc_trim``): after freeing
    something big (a checkpoint dropped from a cache), which the raised trim threshold would
    otherwise keep for reuse. Returns False where glibc is absent."""
    libc = _libc()
    try:
        return libc is not None and bool(libc.malloc_trim(0))
    except AttributeError:
        return False


ONE_THREAD_BLOCKS = True  # False: :func:`one_thread` does nothing (tools.bench_sweep compares)


@lru_cache(maxsize=1)
def _openmp() -> tuple | None:
    """``(omp_get_max_threads, omp_set_num_threads)`` of the OpenMP runtime PyTorch loaded, or
    None where the process has none (a build with another thread pool)."""
    try:
        process = ctypes.CDLL(None)
        return process.omp_get_max_threads, process.omp_set_num_threads
    except (OSError, AttributeError):
        return None


@contextmanager
def one_thread(device: torch.device | str = "cpu") -> Iterator[None]:
    """Run the calling thread's PyTorch operations in the block on one intra-op thread (CPU).

    For chains of cheap elementwise passes (the counter noise's integer hashing): under the
    server's ``OMP_WAIT_POLICY=PASSIVE`` each parallel pass wakes a sleeping thread, which on
    a 2-core machine costs more than the second thread gives (``python -m tools.bench_sweep``
    in docs/performance.md). OpenMP's thread count is per thread, so other threads (other
    visitors' script runs) keep theirs; the caller's is restored, even on an error.
    Elementwise operations give the same bits on any number of threads (matmuls may round
    differently). A no-op on other devices and where PyTorch has no OpenMP runtime."""
    cpu = ONE_THREAD_BLOCKS and torch.device(device).type == "cpu"
    omp = _openmp() if cpu else None
    before = omp[0]() if omp is not None else 1
    if before <= 1:
        yield
        return
    omp[1](1)
    try:
        yield
    finally:
        omp[1](before)


SPLIT_ACROSS_CORES = True  # False: :func:`across_cores` runs in the caller (benchmarks compare)


def core_workers(device: torch.device | str) -> int:
    """How many workers :func:`across_cores` runs on ``device``: the calling thread's intra-op
    thread count on the CPU (what it would have used), 1 on other devices or when switched off
    (:data:`SPLIT_ACROSS_CORES`) or where PyTorch has no OpenMP runtime."""
    if not SPLIT_ACROSS_CORES or torch.device(device).type != "cpu" or _openmp() is None:
        return 1
    return max(1, torch.get_num_threads())


def across_cores(
    fn: Callable[[T], R],
    items: Sequence[T],
    device: torch.device | str = "cpu",
    cost: Callable[[T], float] | None = None,
) -> Iterator[R]:
    """``fn(item)`` for each of ``items``, yielded in their order, computed by
    :func:`core_workers` threads at once, each on one intra-op thread.

    For many independent calls of a chain of small passes (a temperature sweep's batches): one
    OpenMP pool splits each pass over the cores and, under the server's
    ``OMP_WAIT_POLICY=PASSIVE``, wakes its sleeping threads for every one of them; whole calls
    on threads of their own keep every core busy without those wakes (PyTorch releases the GIL
    in its operations). ``fn`` runs under ``torch.inference_mode`` (for inference only) and must
    not touch shared state that is not thread-safe. Results are yielded in the calling thread,
    so progress bars may be told there; each call holds its own memory, so up to
    :func:`core_workers` calls' worth is held at once. ``cost``: the calls start costliest
    first (the last to start is then a short one, so the workers end together). Elementwise
    passes give the same bits on one thread as on several; a matmul may round differently in
    its last bits. An error in any call is raised here once the calls already running have
    ended; the ones not started are cancelled."""
    workers = min(core_workers(device), len(items))
    if workers <= 1:
        for item in items:
            yield fn(item)
        return

    def work(item: T) -> R:
        omp = _openmp()
        if omp is not None:
            # PyTorch sets a new thread's count to the process's at its first call: that first
            torch.get_num_threads()
            omp[1](1)  # then this worker thread's own count (OpenMP's is per thread)
        with torch.inference_mode():
            return fn(item)

    pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="uq-core")
    try:
        order = range(len(items))
        if cost is not None:
            order = sorted(order, key=lambda i: -cost(items[i]))
        futures = {i: pool.submit(work, items[i]) for i in order}
        for i in range(len(items)):
            yield futures[i].result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def tune_cpu(threads: int | None = None) -> dict[str, object]:
    """Set torch's intra-op threads (if given) and tune the allocator; report what was done."""
    if threads is not None:
        torch.set_num_threads(threads)
    return {"threads": torch.get_num_threads(), "allocator_tuned": tune_allocator()}


def pick_device(name: str = "auto") -> torch.device:
    """``"cpu"``, ``"cuda"`` (or ``"cuda:N"``) or ``"auto"`` (CUDA when available) as a device;
    :class:`uqcore.exceptions.ConfigError` if CUDA is asked for and absent."""
    name = (name or "auto").strip().lower()
    if name == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    if name == "cpu":
        return torch.device("cpu")
    if name.startswith("cuda"):
        if not torch.cuda.is_available():
            raise ConfigError(
                f"Device {name!r} was asked for but this machine has no CUDA GPU "
                "that PyTorch can use; use cpu."
            )
        return torch.device(name)
    raise ConfigError(f"Unknown device {name!r}: use cpu, cuda or auto.")


def memory_budget(device: torch.device | str) -> int:
    """Bytes of working activations one sampling chunk may use on ``device``: 128 MiB on the
    CPU (chunks that stay in cache-friendly sizes), an eighth of the free memory on a GPU."""
    device = torch.device(device)
    if device.type == "cuda":
        free, _ = torch.cuda.mem_get_info(device)
        return max(128 * 2**20, free // 8)
    return 128 * 2**20


def model_device(model: torch.nn.Module) -> torch.device:
    """The device of a model's weights (the CPU for a model without any)."""
    return next((p.device for p in model.parameters()), torch.device("cpu"))
