"""The deterministic prefix of a model whose noise enters above its first layer, computed once.

When a family draws noise only from layer ``cfg.first_stochastic_layer = k > 0`` on (the MiniLM
H-STO and BAM checkpoints: the last layer only) and no dropout is on, the embeddings and layers
``0 .. k-1`` give the same hidden states for every sample, every temperature, every noise scale
and every T. :func:`prefix_for` computes them once per example and keeps them in a
:class:`PrefixCache`, so a knob change or another page reruns only layers ``k ..`` per sample.

An example's entry is keyed by ``(owner, its token ids, tau)``: ``owner`` is what the caller
knows identifies the weights (a checkpoint's name and file version), ``tau`` the plain layers'
temperature (the only setting the layers below read). The states are kept in float32 on the
model's device, trimmed to the example's own length, so a cached row gives the numbers of a
fresh pass (within float rounding of the batched matmuls).
"""

from __future__ import annotations

from collections.abc import Hashable

import torch
from torch import nn

from uqcore.lru import ByteLRU
from uqcore.settings import ForwardSettings

PREFIX_ROWS = 16  # examples per pass when computing missing prefixes (bounds the activations)


def _bytes(states: torch.Tensor) -> int:
    return states.numel() * states.element_size()


class PrefixCache:
    """Hidden states below the first stochastic layer, per example, bounded by ``budget`` bytes
    (least recently used dropped first). Thread-safe; shared by every caller of one process.
    ``hits`` and ``misses`` count examples served from the cache and computed."""

    def __init__(self, budget: int):
        self.store: ByteLRU[torch.Tensor] = ByteLRU(budget, _bytes)
        self.hits = 0
        self.misses = 0

    @property
    def bytes(self) -> int:
        """Bytes of the states kept now."""
        return self.store.bytes

    def clear(self) -> None:
        self.store.clear()


def usable(model: nn.Module, s: ForwardSettings, capture: tuple[int, ...] = ()) -> bool:
    """Whether ``model`` has a deterministic prefix under ``s``: its noise starts above layer 0,
    no dropout is on, no layer below is captured, and it is one network (not an ensemble)."""
    cfg = model.cfg
    first = cfg.first_stochastic_layer
    return (
        hasattr(model, "prefix_states")
        and first > 0
        and s.drop_p == 0
        and not any(i < first for i in capture)
    )


def prefix_for(
    model: nn.Module,
    ids: torch.Tensor,  # [B, L] long
    mask: torch.Tensor,  # [B, L] bool
    s: ForwardSettings,
    cache: PrefixCache | None = None,
    owner: Hashable = None,
) -> torch.Tensor:
    """``[B, L, D]``: the states entering layer ``cfg.first_stochastic_layer`` for the batch
    (see :func:`usable`), read from ``cache`` where kept and computed for the other rows,
    :data:`PREFIX_ROWS` at a time. Padding positions hold zeros (their keys are masked)."""
    lengths = mask.sum(1).tolist()  # [B]
    if cache is None:
        return _compute(model, ids, mask, s)
    keys = [
        (owner, ids[b, : lengths[b]].cpu().numpy().tobytes(), float(s.tau))
        for b in range(ids.shape[0])
    ]
    found = [cache.store.peek(k) for k in keys]
    missing = [b for b, f in enumerate(found) if f is None]
    cache.hits += len(found) - len(missing)
    cache.misses += len(missing)
    for lo in range(0, len(missing), PREFIX_ROWS):
        rows = missing[lo : lo + PREFIX_ROWS]
        width = max(lengths[b] for b in rows)
        x = _compute(model, ids[rows, :width], mask[rows, :width], s)  # [r, width, D]
        for j, b in enumerate(rows):
            found[b] = x[j, : lengths[b]].clone()  # [len, D], not a view of the batch
            cache.store.put(keys[b], found[b])
    out = torch.zeros(ids.shape[0], ids.shape[1], model.cfg.d_model, device=ids.device)
    for b, states in enumerate(found):
        out[b, : lengths[b]] = states
    return out  # [B, L, D]


def _compute(model: nn.Module, ids: torch.Tensor, mask: torch.Tensor,
             s: ForwardSettings) -> torch.Tensor:  # fmt: skip
    with torch.inference_mode():
        return model.prefix_states(ids, mask, s)  # [B, L, D]
