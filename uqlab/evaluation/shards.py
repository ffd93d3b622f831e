"""Examples split across processes: ``torchrun --nproc_per_node=N -m uqlab.<command>``.

:func:`join` joins the process group torchrun describes (gloo on CPUs, nccl on GPUs; nothing
when started alone). A :class:`Shards` gives each rank a contiguous block of the examples
(:meth:`Shards.span`) and gathers the blocks' results on rank 0 in example order
(:meth:`Shards.gather`). The library's counter-based noise keys every draw by the example's own
tokens, sample index and seed, so an example's samples do not depend on which process or batch
computed it: the gathered arrays are a one-process run's (up to float rounding of batched
matmuls, ~1e-7).
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
import torch
import torch.distributed as dist


@dataclass(frozen=True)
class Shards:
    """This process's place: ``rank`` of ``world`` processes (1: no group)."""

    rank: int = 0
    world: int = 1

    @property
    def main(self) -> bool:
        return self.rank == 0

    def span(self, n: int) -> range:
        """The examples ``[start, end)`` of ``n`` this rank computes (contiguous, in order)."""
        return range(n * self.rank // self.world, n * (self.rank + 1) // self.world)

    def mine(self, batches: list[list[int]]) -> list[list[int]]:
        """This rank's share of a batch plan: every ``world``-th batch from ``rank`` (whole
        batches, so each is computed exactly as one process computes it)."""
        return [batches[i] for i in self.indices(len(batches))]

    def indices(self, n: int) -> list[int]:
        """The indices of this rank's batches among ``n`` (those :meth:`mine` picks)."""
        return list(range(self.rank, n, self.world))

    def collect(self, batches: list[list[int]], local: tuple, n: int, axis: int = 0):
        """Rank 0: full arrays of ``n`` rows along ``axis``, each row taken from the rank that
        computed it (``local``: this rank's arrays, full size, its ``batches``' rows set);
        other ranks: None. Alone: ``local`` itself."""
        if self.world == 1:
            return tuple(_numpy(a) for a in local)
        rows = [i for b in batches for i in b]
        mine = tuple(np.take(_numpy(a), rows, axis=axis) for a in local)
        parts = [None] * self.world if self.main else None
        dist.gather_object((rows, mine), parts, dst=0)
        if not self.main:
            return None
        out = []
        for k, a in enumerate(local):
            full = np.empty_like(_numpy(a))
            for got_rows, arrays in parts:
                index = [slice(None)] * full.ndim
                index[axis] = got_rows
                full[tuple(index)] = arrays[k]
            out.append(full)
        return tuple(out)

    def gather(self, local, axis: int = 0):
        """Rank 0: every rank's ``local`` (NumPy arrays or tensors, or a tuple of them)
        concatenated along ``axis`` in rank order; other ranks: None. Alone: ``local``."""
        if self.world == 1:
            return local
        parts = [None] * self.world if self.main else None
        dist.gather_object(_numpy(local), parts, dst=0)
        if not self.main:
            return None
        if isinstance(parts[0], tuple):
            return tuple(
                np.concatenate([p[i] for p in parts], axis=axis) for i in range(len(parts[0]))
            )
        return np.concatenate(parts, axis=axis)

    def barrier(self) -> None:
        if self.world > 1:
            dist.barrier()


def _numpy(value):
    if isinstance(value, tuple):
        return tuple(_numpy(v) for v in value)
    if isinstance(value, torch.Tensor):
        return value.detach().cpu().numpy()
    return np.asarray(value)


def join(device: str = "cpu") -> tuple[Shards, torch.device]:
    """Join the process group when started by torchrun (``WORLD_SIZE`` > 1) and pick this
    rank's device: ``cuda:LOCAL_RANK`` for ``cuda`` (or ``auto`` with a GPU), else the CPU."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    rank = int(os.environ.get("RANK", "0"))
    use_cuda = device == "cuda" or (device == "auto" and torch.cuda.is_available())
    dev = (
        torch.device("cuda", int(os.environ.get("LOCAL_RANK", "0")))
        if use_cuda
        else (torch.device("cpu"))
    )
    if use_cuda and torch.cuda.is_available():  # nccl's object collectives use the current one
        torch.cuda.set_device(dev)
    if world > 1 and not dist.is_initialized():
        dist.init_process_group("nccl" if use_cuda else "gloo")
    return Shards(rank, world), dev


def leave() -> None:
    """Leave the process group (end of a torchrun command)."""
    if dist.is_initialized():
        dist.destroy_process_group()
