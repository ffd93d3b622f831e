"""Encoded splits, the per-epoch example order and padded batches, identical on every process.

The epoch order is a permutation seeded by ``(seed, epoch)``. A global batch is split between
processes by position (rank ``r`` takes rows ``r, r + W, ...``) and every process pads to the
global batch's longest example, so each example is computed exactly as in a single process.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from uqcore.inference.batch_predict import pad
from uqcore.nets.noise import sample_seed
from uqcore.text.vocab import Vocab
from uqlab.data import Split


@dataclass(frozen=True)
class Encoded:
    """A split as token ids (each starting with [CLS]) and labels."""

    ids: tuple[tuple[int, ...], ...]
    labels: torch.Tensor  # [n] long

    def __len__(self) -> int:
        return len(self.ids)


def encode_split(split: Split, vocab: Vocab, max_len: int) -> Encoded:
    """Encode every text; texts of only unknown words are kept (as [CLS] [UNK] ...)."""
    ids = tuple(
        tuple(vocab.encode(text, max_len, allow_all_unknown=True).ids) for text in split.texts
    )
    return Encoded(ids=ids, labels=torch.tensor(split.labels, dtype=torch.long))


def epoch_order(n: int, seed: int, epoch: int) -> list[int]:
    """The order in which epoch ``epoch`` visits the ``n`` training examples."""
    g = torch.Generator().manual_seed(sample_seed(seed ^ 0x5EED_0F_0DE7, epoch))
    return torch.randperm(n, generator=g).tolist()


@dataclass(frozen=True)
class Batch:
    positions: list[int]  # positions in the epoch order (the noise of each example is keyed by it)
    ids: torch.Tensor  # [n_local, L]
    mask: torch.Tensor  # [n_local, L]
    labels: torch.Tensor  # [n_local]
    global_size: int  # examples in the whole (all-process) batch


def epoch_batches(
    data: Encoded, order: list[int], batch_size: int, rank: int = 0, world: int = 1
) -> list[Batch]:
    """This process's share of every global batch of the epoch. A final batch with fewer
    examples than processes is dropped (so no process ever gets an empty batch)."""
    out = []
    for start in range(0, len(order), batch_size):
        positions = list(range(start, min(start + batch_size, len(order))))
        if len(positions) < world:
            break
        length = max(len(data.ids[order[p]]) for p in positions)
        mine = positions[rank::world]
        rows = [data.ids[order[p]] for p in mine]
        ids, mask = pad(rows, length)
        labels = data.labels[[order[p] for p in mine]]
        out.append(Batch(mine, ids, mask, labels, len(positions)))
    return out
