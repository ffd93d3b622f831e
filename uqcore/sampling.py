"""Draw T samples of a model's predictions (and, on request, its attention) in batched passes.

The batch is expanded T times (rows ``t * B + b``) and run in chunks that fit a memory budget.
Sample ``t`` uses noise seeded from ``(seed, t)`` only (see :mod:`uqcore.noise`), so results do
not depend on the chunk size, and ``sample(..., T=1, first_sample=t)`` reproduces row ``t`` of a
larger call. Deterministic settings run the model once and repeat the result; a deep ensemble
runs its members together once and sample ``t`` is member ``t mod M``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import torch
from torch import nn

from uqcore.errors import ConfigError
from uqcore.model import DeepEnsemble, check_batch
from uqcore.noise import SampleNoise
from uqcore.settings import ForwardSettings, SamplingSettings, is_stochastic, resolve

MAX_SAMPLES = 10_000
DEFAULT_MEMORY_BUDGET = 256 * 2**20  # bytes of working activations per chunk

# trace name in a layer -> field of SampleResult
_TRACE_FIELDS = {
    "attn": "attention",
    "centroids": "centroids",
    "prior": "prior",
    "posterior_mean": "posterior_mean",
    "attn_before_em": "attention_before_em",
    "kl": "kl_per_head",
}


@dataclass(frozen=True)
class Capture:
    """What to keep besides class probabilities. Maps are kept for ``layers`` only, for ``heads``
    (None = all) and for the first ``max_samples`` samples (None = all); ``kl`` keeps BAM's KL."""

    layers: tuple[int, ...] = ()
    heads: tuple[int, ...] | None = None
    max_samples: int | None = None
    kl: bool = False


@dataclass
class SampleResult:
    """Samples of one call. ``probs [T, B, C]``. Captured maps, per layer index:
    ``attention [Tc, B, Hc, L, L]``, ``centroids [Tc, B, Hc, L, c]`` (H-STO),
    ``prior [Tc, B, Hc, L]``
    and ``posterior_mean [Tc, B, Hc, L, L]`` (BAM), ``attention_before_em [Tc, B, Hc, L, L]``
    (Probabilistic Transformer; ``attention`` is then after EM), ``kl_per_head [Tc, B, Hc]``.
    ``Tc = min(T, max_samples)``, ``Hc`` = number of captured heads. ``kl [T, B]`` is BAM's total KL
    when asked. ``members [T]``: the ensemble member behind each sample."""

    probs: torch.Tensor
    seed: int
    first_sample: int
    settings: ForwardSettings
    stochastic: bool
    heads: tuple[int, ...]
    attention: dict[int, torch.Tensor] = field(default_factory=dict)
    centroids: dict[int, torch.Tensor] = field(default_factory=dict)
    prior: dict[int, torch.Tensor] = field(default_factory=dict)
    posterior_mean: dict[int, torch.Tensor] = field(default_factory=dict)
    attention_before_em: dict[int, torch.Tensor] = field(default_factory=dict)
    kl_per_head: dict[int, torch.Tensor] = field(default_factory=dict)
    kl: torch.Tensor | None = None
    members: torch.Tensor | None = None

    @property
    def T(self) -> int:  # noqa: N802 - the paper's name
        return self.probs.shape[0]


def _check_args(model: nn.Module, T: int, seed: int, first_sample: int, capture: Capture) -> None:
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
    if capture.max_samples is not None and capture.max_samples < 1:
        raise ConfigError(f"capture.max_samples must be >= 1 or None, got {capture.max_samples}.")


def rows_per_chunk(model: nn.Module, batch: int, length: int, budget: int) -> int:
    """How many samples of a ``batch x length`` input fit ``budget`` bytes of activations."""
    cfg = model.cfg
    per_row = 4 * length * (6 * cfg.d_model + 2 * cfg.d_ff)  # projections, residual, FFN
    per_row += 4 * 8 * cfg.n_heads * length * length  # scores, noise, softmax, KL temporaries
    per_row += 4 * 4 * cfg.n_heads * length * cfg.attention.n_centroids
    if cfg.family == "bayesformer":
        per_row += 4 * 3 * cfg.n_heads * length * cfg.d_model  # per-head masked inputs
    return max(1, budget // (per_row * batch))


def sample(
    model: nn.Module,
    ids: torch.Tensor,  # [B, L] long
    mask: torch.Tensor,  # [B, L] bool
    T: int,  # noqa: N803
    seed: int,
    settings: SamplingSettings | None = None,
    capture: Capture | None = None,
    *,
    first_sample: int = 0,
    memory_budget: int = DEFAULT_MEMORY_BUDGET,
) -> SampleResult:
    """Draw samples ``first_sample .. first_sample + T - 1`` for a batch; never mutates ``model``.

    Raises :class:`ConfigError` for out-of-range ``T``, seed, settings or capture, and
    :class:`InputError` for a malformed batch.
    """
    capture = capture or Capture()
    cfg = model.cfg
    _check_args(model, T, seed, first_sample, capture)
    check_batch(ids, mask, cfg)
    fs = resolve(cfg, settings)
    heads = tuple(range(cfg.n_heads)) if capture.heads is None else tuple(capture.heads)
    keep = T if capture.max_samples is None else min(T, capture.max_samples)
    # an ensemble's samples differ (they are its members) but do not depend on the seed
    stochastic = is_stochastic(cfg, fs) or isinstance(model, DeepEnsemble)
    batch = ids.shape[0]
    collected: dict[str, dict[int, list[torch.Tensor]]] = {f: {} for f in _TRACE_FIELDS.values()}
    kls: list[torch.Tensor] = []
    probs_parts: list[torch.Tensor] = []
    members = None

    def collect(traces: dict[int, dict[str, torch.Tensor]], n_keep: int, count: int) -> None:
        for layer, trace in traces.items():
            for name, value in trace.items():
                value = value.reshape(count, batch, *value.shape[1:])[:n_keep]  # [t, B, H, ...]
                value = value[:, :, list(heads)] if len(heads) != cfg.n_heads else value
                collected[_TRACE_FIELDS[name]].setdefault(layer, []).append(value.clone())

    with torch.inference_mode():
        if isinstance(model, DeepEnsemble):
            out = model(ids, mask, fs, None, capture.layers)  # logits [M, B, C]
            m = out.logits.shape[0]
            members = (torch.arange(T) + first_sample) % m  # [T]
            probs_parts.append(torch.softmax(out.logits, -1)[members])  # [T, B, C]
            traces = {
                i: {k: v[members[:keep]] for k, v in tr.items()} for i, tr in out.traces.items()
            }
            collect(
                {i: {k: v.flatten(0, 1) for k, v in tr.items()} for i, tr in traces.items()},
                keep,
                keep,
            )
        elif not stochastic:
            out = model(ids, mask, fs, None, capture.layers)
            probs_parts.append(torch.softmax(out.logits, -1).expand(T, -1, -1))  # [T, B, C]
            collect(out.traces, 1, 1)
            for field_name in collected.values():
                for layer, parts in field_name.items():
                    field_name[layer] = [parts[0].expand(keep, *parts[0].shape[1:])]
            if capture.kl and out.kl is not None:
                kls.append(out.kl.expand(T, -1))
        else:
            step = rows_per_chunk(model, batch, ids.shape[1], memory_budget)
            for start in range(0, T, step):
                count = min(step, T - start)
                noise = SampleNoise(seed, first_sample + start, count, batch, device=ids.device)
                rows_ids = ids.repeat(count, 1)  # [count * B, L]
                rows_mask = mask.repeat(count, 1)
                layers = capture.layers if start < keep else ()
                out = model(rows_ids, rows_mask, fs, noise, layers)
                probs_parts.append(torch.softmax(out.logits, -1).view(count, batch, -1))
                collect(out.traces, min(count, keep - start), count) if layers else None
                if capture.kl and out.kl is not None:
                    kls.append(out.kl.view(count, batch))
    result = SampleResult(
        probs=torch.cat(probs_parts) if len(probs_parts) > 1 else probs_parts[0].contiguous(),
        seed=seed,
        first_sample=first_sample,
        settings=fs,
        stochastic=stochastic,
        heads=heads,
        kl=torch.cat(kls) if kls else None,
        members=members,
    )
    for field_name, per_layer in collected.items():
        setattr(
            result,
            field_name,
            {i: torch.cat(p) if len(p) > 1 else p[0] for i, p in per_layer.items()},
        )
    return result
