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

import torch

_M_TRIM_THRESHOLD = -1
_M_MMAP_THRESHOLD = -3
_MMAP_BYTES = 32 << 20  # blocks below 32 MiB come from the heap and are reused
_TRIM_BYTES = 256 << 20  # keep up to 256 MiB of freed heap before returning it to the OS


def tune_allocator() -> bool:
    """Serve blocks below 32 MiB from glibc's heap and keep up to 256 MiB of it free for reuse.
    Returns False where glibc's ``mallopt`` is absent."""
    name = ctypes.util.find_library("c")
    if not name:
        return False
    try:
        libc = ctypes.CDLL(name)
        ok = libc.mallopt(_M_MMAP_THRESHOLD, _MMAP_BYTES) == 1
        return bool(ok and libc.mallopt(_M_TRIM_THRESHOLD, _TRIM_BYTES) == 1)
    except (OSError, AttributeError):
        return False


def tune_cpu(threads: int | None = None) -> dict[str, object]:
    """Set torch's intra-op threads (if given) and tune the allocator; report what was done."""
    if threads is not None:
        torch.set_num_threads(threads)
    return {"threads": torch.get_num_threads(), "allocator_tuned": tune_allocator()}
