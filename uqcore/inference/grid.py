"""A grid of temperatures sampled in one pass: what :func:`uqcore.inference.sampling.sample` gives
for each setting of the grid, with the noise drawn once for all of them.

Under counter noise a sample's draws depend on the seed, the sample, the example and the draw's
place in the forward pass (:mod:`uqcore.nets.noise`), never on a temperature: every value of a
temperature sweep sees the same Gumbel draws. When the settings differ only in ``tau1`` and
``tau2`` (:data:`ROW_KNOBS`) and the noise enters in the last layer alone through its kernel's
shortcut (:func:`uqcore.inference.prefix.with_projections`: the shipped word-level nets and the
MiniLM H-STO adapters), one forward pass runs the whole grid: the rows are the grid's values
times the samples times the examples (value-major), the temperatures are per-row tensors the
shortcut divides by, and each draw is made once and tiled (:class:`uqcore.nets.noise.TiledNoise`).
Any other grid is sampled one setting at a time, with the same results.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable, Sequence

import torch
from torch import nn

from uqcore.build import DeepEnsemble
from uqcore.exceptions import ConfigError
from uqcore.inference.prefix import (
    PrefixCache,
    ScoresMemo,
    prefix_for,
    usable,
    with_projections,
)
from uqcore.inference.sampling import (
    Capture,
    SampleResult,
    _check_args,
    _chunks,
    sample,
)
from uqcore.nets.model import check_batch
from uqcore.nets.noise import SampleNoise, TiledNoise, example_keys
from uqcore.nets.posterior import posterior_of
from uqcore.runtime import memory_budget as runtime_budget
from uqcore.settings import ForwardSettings, is_stochastic

ROW_KNOBS = ("tau1", "tau2")  # settings the shortcut only divides by: they may vary per row


def one_network(model: nn.Module) -> bool:
    """Whether ``model`` is one network with its own weights: not a deep ensemble nor a weight
    posterior. Those run their passes through ``torch.func.functional_call``, which swaps the
    module's parameters for the call's duration: such a model neither folds a grid nor lets two
    threads run it at once (:func:`uqcore.inference.batch_predict.predict_grid_ids`)."""
    return not isinstance(model, DeepEnsemble) and posterior_of(model) is None


def folds(model: nn.Module, grid: Sequence[ForwardSettings]) -> bool:
    """Whether ``grid`` runs as one pass (see the module doc): at least two settings that
    differ in :data:`ROW_KNOBS` only, every one stochastic, no dropout, one network without a
    weight posterior, and its noise in the last layer's shortcut."""
    if len(grid) < 2 or not one_network(model):
        return False
    if not all(isinstance(s, ForwardSettings) for s in grid):
        return False
    blank = {k: 0.0 for k in ROW_KNOBS}
    rest = {dataclasses.replace(s, **blank, need_kl=False) for s in grid}
    first = grid[0]
    return (
        len(rest) == 1
        and all(is_stochastic(model.cfg, s) for s in grid)
        and usable(model, first)
        and with_projections(model, ())
    )


def sample_grid(
    model: nn.Module,
    ids: torch.Tensor,  # [B, L] long
    mask: torch.Tensor,  # [B, L] bool
    T: int,
    seed: int,
    grid: Sequence[ForwardSettings],
    *,
    memory_budget: int | None = None,
    prefix_cache: PrefixCache | None = None,
    prefix_owner: Hashable = None,
) -> list[SampleResult]:
    """``[sample(model, ids, mask, T, seed, s) for s in grid]`` (counter noise, no maps), in one
    pass per chunk of samples when :func:`folds` says so; the numbers agree within float
    rounding either way. ``memory_budget``: bytes of activations per chunk (the grid's rows
    share it); ``prefix_cache`` / ``prefix_owner``: as :func:`sample` takes them.
    Raises :class:`ConfigError` for an empty grid and what :func:`sample` raises."""
    grid = list(grid)
    if not grid:
        raise ConfigError("A grid of settings needs at least one setting.")
    if not folds(model, grid):
        kw = {"memory_budget": memory_budget, "prefix_cache": prefix_cache}
        return [sample(model, ids, mask, T, seed, s, prefix_owner=prefix_owner, **kw) for s in grid]
    for s in grid:
        _check_args(model, T, seed, 0, Capture(), s, "counter")
    check_batch(ids, mask, model.cfg)
    budget = runtime_budget(ids.device) if memory_budget is None else memory_budget
    grid = [dataclasses.replace(s, need_kl=False) for s in grid]  # as sample() runs them
    with torch.inference_mode():
        logits = _folded(model, ids, mask, T, seed, grid, budget, prefix_cache, prefix_owner)
    probs = torch.softmax(logits, -1)  # [G, T, B, C]
    heads = tuple(range(model.cfg.n_heads))
    return [
        SampleResult(
            probs=probs[g].contiguous(),
            seed=seed,
            first_sample=0,
            settings=s,
            stochastic=True,
            heads=heads,
            logits=logits[g].contiguous(),
        )
        for g, s in enumerate(grid)
    ]


def _folded(model, ids, mask, T, seed, grid, budget, cache, owner) -> torch.Tensor:
    """The grid's logits ``[G, T, B, C]``: chunks of samples, each one forward pass over
    ``G * count * B`` rows (value-major, then sample-major) from the prefix's shortcut parts.
    When only settings the shortcut's ``finish`` reads vary (tau2), the first value's pass keeps
    its noisy scores and the others only finish them (:class:`ScoresMemo`)."""
    batch, length = ids.shape
    tiles = len(grid)
    prefix = prefix_for(model, ids, mask, grid[0], cache, owner)
    keys = example_keys(ids, mask)  # [B]
    step = shortcut_samples(model, batch, length, budget, tiles)
    logits = torch.empty(tiles, T, batch, model.cfg.num_classes, device=ids.device)
    shortcut = model.layers[-1].attn.kernel.shortcut
    finish_only = set(_varying(grid)) <= set(shortcut.finish_reads)

    def run(s, noise, repeats, memo=None):
        given = prefix if memo is None else dataclasses.replace(prefix, memo=memo)
        rows = (ids.repeat(repeats, 1), mask.repeat(repeats, 1))
        return model(*rows, s, noise, (), repeats=repeats, prefix=given).logits  # [R*B, C]

    for start, count in _chunks(T, 0, step, step):
        noise = SampleNoise(seed, start, count, batch, ids.device, keys)
        if finish_only:
            kept = ScoresMemo([], [], count)  # filled with value 0's noisy scores
            logits[0, start : start + count] = run(grid[0], noise, count, kept).view(
                count, batch, -1
            )
            rest = tiles - 1
            z = kept.value.repeat(rest, *([1] * (kept.value.dim() - 1)))  # [rest*count*B, ...]
            memo = ScoresMemo([], [], rest * count, z, kept.draws, given=True)
            s = _per_row(grid[1:], count * batch, ids.device)
            out = run(s, None, rest * count, memo)
            logits[1:, start : start + count] = out.view(rest, count, batch, -1)
        else:
            s = _per_row(grid, count * batch, ids.device)
            out = run(s, TiledNoise(noise, tiles), tiles * count)
            logits[:, start : start + count] = out.view(tiles, count, batch, -1)
    return logits


def shortcut_samples(model: nn.Module, batch: int, length: int, budget: int, tiles: int) -> int:
    """Samples per chunk of a folded grid within ``budget`` bytes: each of its
    ``tiles * count * batch`` rows holds at most the shortcut's per-key tensors (H-STO's centroid
    logits, their noise and its hashing words, the assignments and a softmax temporary,
    ``[H, L, c]`` each), its scores, their noise and weights (``[H, 1, L]``) and its output row
    (measured: the 64 longest bundled reviews of imdb-hsto, T = 10, five tau1 values, peak RSS
    +174 MB at 5c + 8 per key and head for a 128 MiB budget, hence 7c + 10). The layers' own
    estimate (:func:`uqcore.inference.sampling.rows_per_chunk`) sizes a full pass, whose
    projections and feed-forward run over every token."""
    cfg = model.cfg
    centroids = getattr(cfg.attention, "n_centroids", 0)
    per_row = 4 * cfg.n_heads * length * (7 * centroids + 10) + 16 * cfg.d_model
    return max(1, budget // (per_row * batch * tiles))


def _varying(grid: list[ForwardSettings]) -> list[str]:
    """The knobs of :data:`ROW_KNOBS` whose value is not the same across ``grid``."""
    return [k for k in ROW_KNOBS if len({getattr(s, k) for s in grid}) > 1]


def _per_row(grid: list[ForwardSettings], rows: int, device) -> ForwardSettings:
    """``grid[0]`` with each of :data:`ROW_KNOBS` that varies as a ``[G * rows, 1, 1, 1]``
    tensor: value ``g`` on rows ``g * rows .. (g + 1) * rows - 1``."""
    varying = {}
    for knob in _varying(grid):
        values = [float(getattr(s, knob)) for s in grid]
        column = torch.tensor(values, dtype=torch.float32, device=device)
        varying[knob] = column.repeat_interleave(rows).view(-1, 1, 1, 1)
    return dataclasses.replace(grid[0], **varying)
