"""Draw T samples of a model's predictions (and, on request, its attention) in batched passes.

The batch is expanded T times (rows ``t * B + b``) and run in chunks that fit a memory budget.
Sample ``t`` of an example uses noise keyed by ``(seed, t, the example's tokens)`` only (see
:mod:`uqcore.nets.noise`), so results depend neither on the chunk size, nor on the batch around the
example, nor on the device: ``sample(..., T=1, first_sample=t)`` on the example alone reproduces
its row ``t`` of any larger call (within float rounding of the batched matmuls).
``noise="stream"`` draws from training's per-sample streams instead
(:mod:`uqcore.nets.stream_noise`), which depend on the batch; the training loop's dev metric uses
it. Deterministic settings run the model once and repeat the result; a deep ensemble runs its
members together once and sample ``t`` is member ``t mod M``; a model with a weight posterior
(Laplace) runs once per sample with weight draw ``t`` (:mod:`uqcore.nets.posterior`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Hashable
from dataclasses import dataclass, field

import torch
from torch import nn
from torch.func import functional_call

from uqcore.build import DeepEnsemble
from uqcore.exceptions import ConfigError
from uqcore.inference.prefix import (
    PrefixCache,
    keep_scores,
    prefix_for,
    prefix_with_maps,
    scores_memo,
    usable,
    with_projections,
)
from uqcore.nets.layers import widest_query_rows
from uqcore.nets.maps import MAP_NAMES, LayerMaps
from uqcore.nets.model import check_batch
from uqcore.nets.noise import SampleNoise, example_keys
from uqcore.nets.posterior import posterior_of
from uqcore.nets.stream_noise import StreamNoise
from uqcore.runtime import memory_budget as runtime_budget
from uqcore.settings import ForwardSettings, is_stochastic, resolve

MAX_SAMPLES = 10_000
NOISE_KINDS = ("counter", "stream")


@dataclass(frozen=True)
class Capture:
    """What to keep besides class probabilities. Maps are kept for ``layers`` only, for ``heads``
    (None = all) and for the first ``max_samples`` samples (None = all); ``maps`` names the
    :class:`uqcore.nets.maps.LayerMaps` fields to keep (None = every one the family has); ``kl``
    keeps BAM's total KL; ``features`` asks a model whose samples differ for the pooled features
    of one pass without noise (:attr:`SampleResult.features`), at the cost of the layers from the
    first stochastic one up run once more on the batch (all of them without a prefix: dropout)."""

    layers: tuple[int, ...] = ()
    heads: tuple[int, ...] | None = None
    max_samples: int | None = None
    maps: tuple[str, ...] | None = None
    kl: bool = False
    features: bool = False


@dataclass
class SampleResult:
    """Samples of one call. ``probs [T, B, C]``. ``maps``: layer index -> the captured
    :class:`LayerMaps` of that layer, each field with ``[Tc, B, Hc]`` in front of the kernel's
    per-row shape: ``attention [Tc, B, Hc, L, L]``, ``centroids [Tc, B, Hc, L, c]`` (H-STO),
    ``prior [Tc, B, Hc, L]`` and ``posterior_mean [Tc, B, Hc, L, L]`` (BAM),
    ``attention_before_em [Tc, B, Hc, L, L]`` (Probabilistic Transformer; ``attention`` is then
    after EM), ``kl_per_head [Tc, B, Hc]``. ``Tc = min(T, max_samples)``, ``Hc`` = number of
    captured heads. ``kl [T, B]`` is BAM's total KL when asked. ``members [T]``: the ensemble
    member behind each sample. ``logits [T, B, C]``: what the softmax of ``probs`` read (for
    logit-based scores such as energy). ``features [B, D]``: the pooled last-layer state of one
    pass without noise or dropout with the trained weights (a deep ensemble: the mean over its
    members), as :func:`uqcore.inference.batch_predict.features_ids` computes it, so a caller
    needing both reads the model once: set when that pass is the call's own (settings without
    noise, whose one pass stands for every sample; an ensemble, whose members run once) and,
    when :attr:`Capture.features` asks, for the other families (None otherwise)."""

    probs: torch.Tensor
    seed: int
    first_sample: int
    settings: ForwardSettings
    stochastic: bool
    heads: tuple[int, ...]
    maps: dict[int, LayerMaps] = field(default_factory=dict)
    kl: torch.Tensor | None = None
    members: torch.Tensor | None = None
    logits: torch.Tensor | None = None
    features: torch.Tensor | None = None

    @property
    def T(self) -> int:  # the paper's name
        return self.probs.shape[0]


def _check_args(
    model: nn.Module,
    T: int,
    seed: int,
    first_sample: int,
    capture: Capture,
    settings: ForwardSettings | None,
    noise: str,
) -> None:
    """ConfigError for any argument of :func:`sample` out of range (the batch aside)."""
    cfg = model.cfg
    if isinstance(T, bool) or not isinstance(T, int) or not 1 <= T <= MAX_SAMPLES:
        raise ConfigError(
            f"T (number of samples) must be an integer in [1, {MAX_SAMPLES}], got {T!r}."
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ConfigError(f"seed must be an integer in [0, 2^63), got {seed!r}.")
    if isinstance(first_sample, bool) or not isinstance(first_sample, int) or first_sample < 0:
        raise ConfigError(f"first_sample must be an integer >= 0, got {first_sample!r}.")
    bad = [i for i in capture.layers if not 0 <= i < cfg.n_layers]
    if bad:
        raise ConfigError(
            f"Cannot capture layer(s) {bad}: the model has layers 0..{cfg.n_layers - 1}."
        )
    if capture.heads is not None:
        bad = [h for h in capture.heads if not 0 <= h < cfg.n_heads]
        if bad or not capture.heads:
            raise ConfigError(
                f"Cannot capture head(s) {list(capture.heads)}: heads are 0..{cfg.n_heads - 1}."
            )
    unknown = set(capture.maps or ()) - set(MAP_NAMES)
    if unknown:
        raise ConfigError(f"Unknown map(s) {sorted(unknown)}; choose from {sorted(MAP_NAMES)}.")
    if capture.max_samples is not None and capture.max_samples < 1:
        raise ConfigError(f"capture.max_samples must be >= 1 or None, got {capture.max_samples}.")
    if noise not in NOISE_KINDS:
        raise ConfigError(f"noise must be one of {NOISE_KINDS}, got {noise!r}.")
    if settings is not None and not isinstance(settings, ForwardSettings):
        raise ConfigError(
            f"settings must be ForwardSettings, got {type(settings).__name__}; resolve a "
            "request's SamplingSettings first: uqcore.settings.resolve(model.cfg, settings)."
        )


def _chunks(total: int, keep: int, keep_step: int, step: int):
    """(start, count) chunks of ``total`` samples: the first ``keep`` (whose maps are kept)
    ``keep_step`` at a time, the rest ``step`` at a time. Chunking never changes a sample."""
    start = 0
    while start < total:
        count = min(keep_step if start < keep else step, total - start)
        if start < keep:
            count = min(count, keep - start)
        yield start, count
        start += count


def _only_last_layer_per_sample(model, s: ForwardSettings, full_rows: bool) -> bool:
    """Whether a chunk of samples runs only the last layer per sample, from [CLS] only: the
    family's attention is in the last layer alone, nothing below draws noise (no dropout), the
    last layer's maps are not captured and the family does not need every query (EM); a
    decoder's last layer attends from every query (``last_layer_shortcut``)."""
    cfg = model.cfg
    return (
        getattr(model, "last_layer_shortcut", True)
        and cfg.n_layers > 1
        and cfg.first_stochastic_layer == cfg.n_layers - 1
        and s.drop_p == 0
        and not full_rows
        and not cfg.spec.needs_every_query(s)
    )


def rows_per_chunk(
    model: nn.Module,
    batch: int,
    length: int,
    budget: int,
    s: ForwardSettings,
    full_rows: bool = False,
) -> int:
    """How many samples of a ``batch x length`` input fit ``budget`` bytes of activations.
    ``full_rows``: whether the last layer attends from every token (see widest_query_rows)."""
    cfg = model.cfg
    rows = widest_query_rows(cfg, length, full_rows, s)
    per_row = 4 * length * (6 * cfg.d_model + 2 * cfg.d_ff)  # projections, residual, FFN
    if _only_last_layer_per_sample(model, s, full_rows):
        # the layers below run once on the unique rows (uqcore.nets.model.run_layers): a sample
        # holds the last layer's Q, K, V and mixed keys [L, d] and its [CLS] row's FFN
        rows = 1
        per_row = 4 * (4 * length * cfg.d_model + 6 * cfg.d_model + 2 * cfg.d_ff)
    per_row += 4 * 8 * cfg.n_heads * rows * length  # scores, noise, softmax, KL temporaries
    per_row += 4 * 4 * cfg.n_heads * length * getattr(cfg.attention, "n_centroids", 2)
    per_row += 4 * cfg.spec.extra_bytes * cfg.n_heads * length * cfg.d_model  # BayesFormer
    return max(1, budget // (per_row * batch))


def sample(
    model: nn.Module,
    ids: torch.Tensor,  # [B, L] long
    mask: torch.Tensor,  # [B, L] bool
    T: int,
    seed: int,
    settings: ForwardSettings | None = None,
    capture: Capture | None = None,
    *,
    first_sample: int = 0,
    memory_budget: int | None = None,
    noise: str = "counter",
    prefix_cache: PrefixCache | None = None,
    prefix_owner: Hashable = None,
) -> SampleResult:
    """Draw samples ``first_sample .. first_sample + T - 1`` for a batch; never mutates ``model``.

    ``settings``: resolved settings (:func:`uqcore.settings.resolve` merges a request's
    :class:`SamplingSettings` into the checkpoint's values), used as given; None: the
    checkpoint's own (``resolve(model.cfg)``).
    ``noise``: ``"counter"`` (per-example, batch- and device-independent) or ``"stream"``
    (training's generator; see the module doc). ``memory_budget``: bytes of activations per
    chunk of samples (None: :func:`uqcore.runtime.memory_budget` of the input's device).
    When the noise enters above layer 0 and no dropout is on
    (:func:`uqcore.inference.prefix.usable`), the layers below run once for the whole call;
    ``prefix_cache`` keeps them across calls, keyed by ``prefix_owner`` (what identifies the
    weights) and each example's tokens. Maps of those layers, when captured, come from that one
    pass (not cached: the maps are its bulk) and stand for every sample, being the same in each.
    Raises :class:`ConfigError` for out-of-range ``T``, seed or capture, settings that are not
    :class:`ForwardSettings`, and :class:`InputError` for a malformed batch."""
    capture = capture or Capture()
    cfg = model.cfg
    _check_args(model, T, seed, first_sample, capture, settings, noise)
    check_batch(ids, mask, cfg)
    if memory_budget is None:
        memory_budget = runtime_budget(ids.device)
    fs = dataclasses.replace(resolve(cfg) if settings is None else settings, need_kl=capture.kl)
    heads = tuple(range(cfg.n_heads)) if capture.heads is None else tuple(capture.heads)
    keep = T if capture.max_samples is None else min(T, capture.max_samples)
    # an ensemble's samples differ (they are its members) but do not depend on the seed
    stochastic = is_stochastic(cfg, fs) or isinstance(model, DeepEnsemble)
    maps = _Maps(keep, ids.shape[0], heads, cfg.n_heads, capture.maps)
    members = features = None
    with torch.inference_mode():
        if isinstance(model, DeepEnsemble):
            logits, probs, kl, members, features = _ensemble(
                model, ids, mask, fs, T, first_sample, capture.layers, maps
            )
        elif stochastic and posterior_of(model) is not None:
            prefix = _below_draws(model, ids, mask, fs, capture, prefix_cache, prefix_owner)
            logits, probs, kl, features = _weight_draws(
                model, ids, mask, fs, seed, first_sample, T, capture, maps, prefix
            )
        else:
            prefix, upper = _prefix(
                model, ids, mask, fs, capture.layers, stochastic, maps, prefix_cache, prefix_owner
            )
            if not stochastic:
                logits, probs, kl, features = _deterministic(
                    model, ids, mask, fs, T, capture, prefix, maps
                )
            else:
                plan = _Plan(seed, first_sample, T, keep, upper, noise, memory_budget)
                logits, probs, kl, features = _stochastic(
                    model, ids, mask, fs, plan, capture, prefix, maps, prefix_cache, prefix_owner
                )
    return SampleResult(
        probs=probs.contiguous(),
        seed=seed,
        first_sample=first_sample,
        settings=fs,
        stochastic=stochastic,
        heads=heads,
        maps=maps.layers,
        kl=kl,
        members=members,
        logits=logits.contiguous(),
        features=features,
    )


def _prefix(model, ids, mask, fs, layers, stochastic, maps, prefix_cache, prefix_owner):
    """The one pass below the first stochastic layer (:mod:`uqcore.inference.prefix`), or None, and
    the layers each chunk of samples still captures: every asked one, or with the maps below the
    noise taken from that pass (stored in ``maps``) only those from the noise up."""
    if usable(model, fs, layers):
        return prefix_for(model, ids, mask, fs, prefix_cache, prefix_owner, layers), layers
    if stochastic and usable(model, fs):
        # layers below the noise captured: one pass for them, the samples run the rest
        prefix = prefix_with_maps(model, ids, mask, fs, layers)
        maps.put_repeated(prefix.below or {})
        return prefix, tuple(i for i in layers if i >= model.cfg.first_stochastic_layer)
    return None, layers


def _ensemble(model, ids, mask, fs, T, first_sample, layers, maps):
    """A deep ensemble's members run once together; sample ``t`` is member ``t mod M``.
    Returns logits and probs ``[T, B, C]``, no KL, the member of each sample ``[T]`` and the
    members' mean pooled features ``[B, D]``."""
    out = model(ids, mask, fs, None, layers)  # logits [M, B, C], features [M, B, D]
    members = (torch.arange(T, device=ids.device) + first_sample) % out.logits.shape[0]
    logits = out.logits[members]  # [T, B, C]
    maps.put_indexed(out.maps, members[: maps.keep])
    return logits, torch.softmax(logits, -1), None, members, out.features.mean(0)


def _noiseless(model, ids, mask, fs, capture: Capture, prefix) -> torch.Tensor | None:
    """When ``capture.features`` asks: the pooled features ``[B, D]`` of one pass without noise
    (nor dropout: it draws from the noise) with the model's own weights, from ``prefix`` (the
    layers below the noise, the same in every pass) when the call has one: what
    ``model(ids, mask).features`` gives. None otherwise."""
    if not capture.features:
        return None
    return model(ids, mask, fs, None, (), prefix=prefix).features


def _below_draws(model, ids, mask, fs, capture, cache, owner):
    """The pass through the blocks below the lowest drawn one (the trained weights, the same in
    every weight draw), or None where the sampler cannot keep one."""
    if usable(model, fs, capture.layers) and not with_projections(model, capture.layers):
        return prefix_for(model, ids, mask, fs, cache, owner)
    return None


def _weight_draws(model, ids, mask, fs, seed, first_sample, T, capture, maps, prefix=None):
    """A weight posterior: sample ``t`` is one forward pass with weight draw ``first_sample + t``
    (the same draw for every example), from ``prefix`` (the blocks below the drawn ones, whose
    weights no draw changes) when given. Returns logits and probs ``[T, B, C]``, no KL, and the
    features :func:`_noiseless` gives."""
    posterior = posterior_of(model)
    delta = model.cfg.attention.prior_precision
    trained = dict(model.named_parameters())
    logits = torch.empty(T, ids.shape[0], model.cfg.num_classes, device=ids.device)  # [T, B, C]
    for t in range(T):
        drawn = posterior.draw(trained, delta, seed, first_sample + t, fs.noise_scale)
        layers = capture.layers if t < maps.keep else ()
        kwargs = {"settings": fs, "capture": layers, "prefix": prefix}
        out = functional_call(model, drawn, (ids, mask), kwargs)
        logits[t] = out.logits
        maps.put_chunk(out.maps, t, 1)
    features = _noiseless(model, ids, mask, fs, capture, prefix)
    return logits, torch.softmax(logits, -1), None, features


def _deterministic(model, ids, mask, fs, T, capture, prefix, maps):
    """Settings without noise: one pass stands for every sample. Returns logits and probs
    ``[T, B, C]`` (broadcast views), when asked the KL ``[T, B]``, and the pass's pooled
    features ``[B, D]``."""
    out = model(ids, mask, fs, None, capture.layers, prefix=prefix)
    maps.put_repeated(out.maps)
    kl = out.kl.expand(T, -1) if capture.kl and out.kl is not None else None
    logits = out.logits.expand(T, -1, -1)
    return logits, torch.softmax(out.logits, -1).expand(T, -1, -1), kl, out.features


@dataclass(frozen=True)
class _Plan:
    """The samples a stochastic call draws: ``T`` from ``first_sample`` with ``seed``; the first
    ``keep`` capture ``layers``; ``noise`` kind; ``memory_budget`` bytes per chunk."""

    seed: int
    first_sample: int
    T: int
    keep: int
    layers: tuple[int, ...]
    noise: str
    memory_budget: int


def _stochastic(model, ids, mask, fs, plan: _Plan, capture, prefix, maps, cache, owner):
    """The samples in chunks that fit the memory budget (:func:`_chunks`), each chunk the batch
    repeated to ``[count * B, L]`` (sample-major) in one forward pass with its own noise.
    Returns logits and probs ``[T, B, C]``, for a family with a KL when asked ``[T, B]``, and
    the features :func:`_noiseless` gives."""
    cfg = model.cfg
    batch, length = ids.shape
    probs = torch.empty(plan.T, batch, cfg.num_classes, device=ids.device)  # [T, B, C]
    logits = torch.empty_like(probs)
    has_kl = capture.kl and cfg.spec.has_kl
    kl = torch.empty(plan.T, batch, device=ids.device) if has_kl else None
    full_rows = cfg.n_layers - 1 in capture.layers
    step = rows_per_chunk(model, batch, length, plan.memory_budget, fs)  # maps not kept
    cap_step = rows_per_chunk(model, batch, length, plan.memory_budget, fs, full_rows)
    keys = example_keys(ids, mask) if plan.noise == "counter" else None  # [B]
    for start, count in _chunks(plan.T, plan.keep if capture.layers else 0, cap_step, step):
        first = plan.first_sample + start
        if keys is None:
            draws = StreamNoise(plan.seed, first, count, batch, ids.device)
        else:
            draws = SampleNoise(plan.seed, first, count, batch, ids.device, keys)
        layers = plan.layers if start < plan.keep else ()
        rows_ids, rows_mask = ids.repeat(count, 1), mask.repeat(count, 1)
        memo = None
        if prefix is not None and prefix.prepared is not None and keys is not None:
            memo = scores_memo(model, ids, mask, fs, cache, owner, plan.seed, first, count)
        given = prefix if memo is None else dataclasses.replace(prefix, memo=memo)
        out = model(rows_ids, rows_mask, fs, draws, layers, repeats=count, prefix=given)
        keep_scores(cache, memo)
        logits[start : start + count] = out.logits.view(count, batch, -1)
        probs[start : start + count] = torch.softmax(out.logits, -1).view(count, batch, -1)
        maps.put_chunk(out.maps, start, count)
        if kl is not None:
            kl[start : start + count] = out.kl.view(count, batch)
    return logits, probs, kl, _noiseless(model, ids, mask, fs, capture, prefix)


class _Maps:
    """Captured maps, written into preallocated ``[keep, B, Hc, ...]`` buffers chunk by chunk
    (never concatenated, so peak memory holds each map once)."""

    def __init__(self, keep, batch, heads: tuple[int, ...], n_heads: int, wanted=None):
        self.keep, self.batch = keep, batch
        self.wanted = MAP_NAMES if wanted is None else tuple(wanted)
        self.heads = None if len(heads) == n_heads else list(heads)
        self.layers: dict[int, LayerMaps] = {}

    def _select(self, value: torch.Tensor) -> torch.Tensor:
        return value if self.heads is None else value[:, :, self.heads]  # [t, B, Hc, ...]

    def put_chunk(self, maps: dict[int, LayerMaps], start: int, count: int) -> None:
        n = min(count, self.keep - start)
        for layer, found in maps.items():
            rows = found.keep(self.wanted).map(
                lambda _, v: self._select(v.reshape(count, self.batch, *v.shape[1:])[:n])
            )  # [n, B, Hc, ...] each
            if layer not in self.layers:
                self.layers[layer] = rows.map(lambda _, v: v.new_empty(self.keep, *v.shape[1:]))
            for (_, buffer), (_, value) in zip(
                self.layers[layer].items(), rows.items(), strict=True
            ):
                buffer[start : start + n] = value

    def put_repeated(self, maps: dict[int, LayerMaps]) -> None:
        """One deterministic pass stands for every sample (a broadcast view, no copy)."""
        for layer, found in maps.items():
            one = found.keep(self.wanted).map(lambda _, v: self._select(v[None]))  # [1, B, Hc..]
            self.layers[layer] = one.map(lambda _, v: v.expand(self.keep, *v.shape[1:]))

    def put_indexed(self, maps: dict[int, LayerMaps], index: torch.Tensor) -> None:
        """Ensemble: member outputs ``[M, B, ...]`` picked per sample by ``index [keep]``."""
        for layer, found in maps.items():
            self.layers[layer] = found.keep(self.wanted).map(lambda _, v: self._select(v[index]))
