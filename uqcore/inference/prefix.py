"""The deterministic prefix of a model whose noise enters above its first layer, computed once.

When a family draws noise only from layer ``k = cfg.first_stochastic_layer`` on (the MiniLM
H-STO and BAM checkpoints: the last layer only; the word-level nets: every layer, ``k = 0``) and
no dropout is on, the embeddings and layers ``0 .. k-1`` give the same hidden states for every
sample, every temperature, every noise scale and every T. :func:`prefix_for` computes them once
per example and keeps them in a :class:`PrefixCache`, so a knob change or another page reruns
only what the noise touches.
When ``k`` is the last layer and its maps are not wanted, the prefix also holds that layer's
projections (the [CLS] query, every key and value), which are deterministic too: a sample then
computes only the noisy parts of one attention row (:class:`uqcore.kernels.common.Shortcut`).

A sample's noisy scores (the shortcut's ``noisy`` part: every draw, none of the settings its
``finish`` reads, i.e. tau2 for STO / H-STO) depend on the example, the seed, which samples and
the other settings only: :func:`scores_memo` serves them from the cache's second store when kept,
so a tau2 change reruns a softmax and a weighted sum per sample, and :func:`keep_scores` keeps
what a call drew. They are kept per example (``[count, H, Lq, L]``), within their own budget.

An example's entry is keyed by ``(owner, its token ids, tau, projections or not)``: ``owner`` is
what the caller knows identifies the weights (a checkpoint's name and file version), ``tau`` the
plain layers' temperature (the only setting the layers below read). The states are kept in
float32 on the model's device, trimmed to the example's own length, so a cached row gives the
numbers of a fresh pass (within float rounding of the batched matmuls).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from dataclasses import dataclass

import torch
from torch import nn

from uqcore.lru import ByteLRU
from uqcore.nets.posterior import posterior_of
from uqcore.settings import ForwardSettings

PREFIX_ROWS = 16  # examples per pass when computing missing prefixes (bounds the activations)
# What a tool that passes over the same texts again (a grid of settings on a dev split) keeps by
# default: 2,500 IMDB reviews at 256 tokens of MiniLM hold ~1 GB. Beyond it the least recently
# used are dropped and computed again: memory stays bounded, the numbers the same.
GRID_BUDGET = 2 * 2**30


@dataclass
class Prefix:
    """What enters the first stochastic layer for a batch of unique rows: ``x [B, L, D]``, or,
    when that layer's shortcut parts are kept, the [CLS] row ``x [B, 1, D]`` with ``prepared``
    (the parts, each ``[B, H, L or 1, *]``) and the values ``v [B, H, L, d_h]``
    (:meth:`uqcore.nets.layers.MultiHeadAttention.prepare`). Padding holds zeros."""

    x: torch.Tensor
    prepared: tuple[torch.Tensor, ...] | None = None
    v: torch.Tensor | None = None
    memo: ScoresMemo | None = None
    # the maps of captured layers below it, from the one pass that made it (never cached):
    # layer -> LayerMaps of [B, H, ...] (:func:`prefix_with_maps`)
    below: dict | None = None

    def parts(self) -> tuple[torch.Tensor, ...]:
        return (self.x,) if self.prepared is None else (self.x, *self.prepared, self.v)

    def attention(self) -> tuple | None:
        """``(prepared, v, memo)`` for the layer, or None when only ``x`` is kept."""
        return None if self.prepared is None else (self.prepared, self.v, self.memo)


@dataclass
class ScoresMemo:
    """The noisy scores of one chunk of samples of a batch: given to the layer (``given``:
    read from the cache; the layer skips their ``draws``) or filled by it, to be kept.
    ``value [count * B, H, Lq, L]`` sample-major; ``keys`` / ``lengths``: each example's cache
    key and number of tokens."""

    keys: list[Hashable]
    lengths: list[int]
    count: int
    value: torch.Tensor | None = None
    draws: int = 0
    given: bool = False


def _bytes(parts: tuple[torch.Tensor, ...]) -> int:
    return sum(t.numel() * t.element_size() for t in parts)


class PrefixCache:
    """Prefixes per example, bounded by ``budget`` bytes (least recently used dropped first).
    Thread-safe; shared by every caller of one process. ``hits`` and ``misses`` count examples
    served from the cache and computed."""

    def __init__(self, budget: int, scores_budget: int = 0):
        self.store: ByteLRU[tuple[torch.Tensor, ...]] = ByteLRU(budget, _bytes)
        self.scores: ByteLRU[tuple[torch.Tensor, int]] | None = (
            ByteLRU(scores_budget, lambda kept: _bytes(kept[:1])) if scores_budget > 0 else None
        )  # (z [count, H, Lq, L], draws) per example and chunk of samples
        self.hits = 0
        self.misses = 0
        self.score_hits = 0

    @property
    def bytes(self) -> int:
        """Bytes of the states kept now (not the noisy scores: :attr:`scores_bytes`)."""
        return self.store.bytes

    @property
    def scores_bytes(self) -> int:
        """Bytes of the noisy scores kept now."""
        return 0 if self.scores is None else self.scores.bytes

    def clear(self) -> None:
        self.store.clear()
        if self.scores is not None:
            self.scores.clear()


def usable(model: nn.Module, s: ForwardSettings, capture: tuple[int, ...] = ()) -> bool:
    """Whether ``model`` has a deterministic prefix under ``s``: no dropout is on, no layer
    below its first stochastic one is captured, it is one network (not an ensemble), and no
    weight draw reaches below that layer (a weight posterior's prefix starts above layer 0).
    Noise from layer 0 on (the word-level nets) leaves the embeddings as the prefix, and the
    projections of a one-layer net's only layer (:func:`with_projections`)."""
    first = model.cfg.first_stochastic_layer
    return (
        hasattr(model, "prefix_states")
        and (first > 0 or posterior_of(model) is None)
        and s.drop_p == 0
        and not any(i < first for i in capture)
    )


def prefix_with_maps(
    model: nn.Module,
    ids: torch.Tensor,  # [B, L] long
    mask: torch.Tensor,  # [B, L] bool
    s: ForwardSettings,
    capture: tuple[int, ...],
) -> Prefix:
    """The prefix of the batch in one pass that also captures the maps of ``capture``'s layers
    below the first stochastic one (``Prefix.below``): those layers are deterministic, so one
    pass stands for every sample, and the samples run the noisy layers only. Not cached (the
    maps are the bulk of it). Needs :func:`usable` without the capture."""
    first = model.cfg.first_stochastic_layer
    with torch.inference_mode():
        return model.prefix_states(ids, mask, s, capture=tuple(i for i in capture if i < first))


def with_projections(model: nn.Module, capture: tuple[int, ...] = ()) -> bool:
    """Whether the prefix also keeps the first stochastic layer's shortcut parts: that layer is
    the last (it attends from [CLS] only: not a decoder's, ``last_layer_shortcut``), its kernel
    has a shortcut and its maps are not captured."""
    first = model.cfg.first_stochastic_layer
    last = first == model.cfg.n_layers - 1
    return (
        last
        and getattr(model, "last_layer_shortcut", True)
        and first not in capture
        and getattr(model.layers[first].attn.kernel, "shortcut", None) is not None
    )


def prefix_for(
    model: nn.Module,
    ids: torch.Tensor,  # [B, L] long
    mask: torch.Tensor,  # [B, L] bool
    s: ForwardSettings,
    cache: PrefixCache | None = None,
    owner: Hashable = None,
    capture: tuple[int, ...] = (),
) -> Prefix:
    """The :class:`Prefix` of the batch (see :func:`usable`), read from ``cache`` where kept
    and computed for the other rows, :data:`PREFIX_ROWS` at a time."""
    proj = with_projections(model, capture)
    if cache is None:
        return _compute(model, ids, mask, s, proj)
    lengths = mask.sum(1).tolist()  # [B]
    keys = [
        (owner, ids[b, : lengths[b]].cpu().numpy().tobytes(), float(s.tau), proj)
        for b in range(ids.shape[0])
    ]
    found = [cache.store.peek(k) for k in keys]
    missing = [b for b, f in enumerate(found) if f is None]
    cache.hits += len(found) - len(missing)
    cache.misses += len(missing)
    for lo in range(0, len(missing), PREFIX_ROWS):
        rows = missing[lo : lo + PREFIX_ROWS]
        width = max(lengths[b] for b in rows)
        got = _compute(model, ids[rows, :width], mask[rows, :width], s, proj).parts()
        keyed = tuple(_per_key(t, width) for t in got)
        for j, b in enumerate(rows):
            # one example's own length, copied (not a view that keeps the batch alive)
            found[b] = tuple(
                _trim(t[j], lengths[b], k).clone() for t, k in zip(got, keyed, strict=True)
            )
            cache.store.put(keys[b], found[b])
    return _assemble(found, ids.shape[1], proj)


def _per_key(t: torch.Tensor, width: int) -> bool:
    """Whether a batch part runs along the keys: ``[B, L, D]`` or ``[B, H, L, *]``."""
    return t.shape[1 if t.dim() == 3 else 2] == width and width > 1


def _trim(t: torch.Tensor, length: int, keyed: bool) -> torch.Tensor:
    """One example's part cut to its tokens (``[L, D]`` on dim 0, ``[H, L, *]`` on dim 1)."""
    if not keyed:
        return t
    return t[:length] if t.dim() == 2 else t[:, :length]


def _assemble(found: list[tuple[torch.Tensor, ...]], length: int, proj: bool) -> Prefix:
    """Per-example parts -> a zero-padded batch :class:`Prefix` of ``length`` keys."""
    padded = []
    for i, first in enumerate(found[0]):
        dim = 0 if first.dim() == 2 else 1
        keyed = any(parts[i].shape[dim] > 1 for parts in found) or (not proj and dim == 0)
        shape = list(first.shape)
        shape[dim] = length if keyed else 1
        out = first.new_zeros(len(found), *shape)
        for b, parts in enumerate(found):
            n = parts[i].shape[dim]
            if dim == 0:
                out[b, :n] = parts[i]
            else:
                out[b, :, :n] = parts[i]
        padded.append(out)
    if not proj:
        return Prefix(padded[0])
    return Prefix(padded[0], tuple(padded[1:-1]), padded[-1])


def _compute(
    model: nn.Module, ids: torch.Tensor, mask: torch.Tensor, s: ForwardSettings, proj: bool
) -> Prefix:
    with torch.inference_mode():
        return model.prefix_states(ids, mask, s, projections=proj)


def scores_memo(
    model: nn.Module,
    ids: torch.Tensor,  # [B, L] long
    mask: torch.Tensor,  # [B, L] bool
    s: ForwardSettings,
    cache: PrefixCache | None,
    owner: Hashable,
    seed: int,
    first: int,
    count: int,
) -> ScoresMemo | None:
    """The :class:`ScoresMemo` of samples ``first .. first + count - 1`` of the batch under
    counter noise (:class:`uqcore.nets.noise.SampleNoise`): given when ``cache`` keeps every
    example's scores, else empty (to be filled, then :func:`keep_scores`). None without a
    scores store. The key holds every setting except those the shortcut's ``finish`` reads."""
    if cache is None or cache.scores is None:
        return None
    shortcut = model.layers[model.cfg.first_stochastic_layer].attn.kernel.shortcut
    wanted = dataclasses.replace(s, **{name: None for name in shortcut.finish_reads})
    lengths = mask.sum(1).tolist()  # [B]
    keys = [
        (
            "scores",
            owner,
            ids[b, : lengths[b]].cpu().numpy().tobytes(),
            wanted,
            int(seed),
            int(first),
            int(count),
        )
        for b in range(ids.shape[0])
    ]
    memo = ScoresMemo(keys, lengths, count)
    found = [cache.scores.peek(k) for k in keys]
    if any(f is None for f in found):
        return memo
    draws = {f[1] for f in found}
    if len(draws) != 1:  # every example of one model makes the same draws
        return memo
    first_z = found[0][0]  # [count, H, Lq, n]
    batch, length = ids.shape
    z = first_z.new_full((count, batch, *first_z.shape[1:-1], length), float("-inf"))
    for b, (kept, _) in enumerate(found):
        z[:, b, ..., : lengths[b]] = kept  # padded keys stay -inf, as the layer masks them
    memo.value, memo.draws, memo.given = z.view(count * batch, *z.shape[2:]), draws.pop(), True
    cache.score_hits += batch
    return memo


def keep_scores(cache: PrefixCache | None, memo: ScoresMemo | None) -> None:
    """Keep the scores a layer drew into ``memo`` (nothing when they were given)."""
    if cache is None or cache.scores is None or memo is None or memo.given or memo.value is None:
        return
    batch = len(memo.keys)
    z = memo.value.view(memo.count, batch, *memo.value.shape[1:])  # [count, B, H, Lq, L]
    for b, key in enumerate(memo.keys):
        cache.scores.put(key, (z[:, b, ..., : memo.lengths[b]].clone(), memo.draws))
