"""Which tokens move a stochastic model's prediction and its uncertainty, sample by sample.

:func:`attribute` explains one text. For each of its T samples, with that sample's noise held
fixed (the counter noise of :mod:`uqcore.nets.noise`, keyed by the run seed, the sample number and
the text's token ids, which an attribution never changes), it attributes

* ``p_t(target)``, sample t's probability of the explained class, and
* the mutual information of the T samples (a statistic of all of them together: its
  attribution is one value per token, the sum of what flows through every sample),

to the token embeddings, by

* ``"gradient_x_input"``: ``(x - x0) . grad f(x)`` (first order; one backward pass), or
* ``"integrated_gradients"`` (Sundararajan et al., 2017): ``(x - x0) . mean_s grad f(x0 +
  a_s (x - x0))`` at the ``steps`` midpoints ``a_s = (s + 1/2) / steps`` of the straight path
  from the baseline ``x0``; completeness says the attributions sum to ``f(x) - f(x0)``, and the
  gap to it is returned for every sample (it shrinks as ``1/steps^2`` for smooth ``f``).

The baseline ``x0`` replaces every token's embedding by the padding token's, except at held
positions (``[CLS]``, ``[SEP]``: their attribution is 0); positions, token types and norms stay.

Batched: sample ``t`` at path point ``s`` is row ``t * S' + s`` of a chunk (``S'`` points per
chunk), every row with its own copy of the embeddings, so one backward pass gives every row's
gradient (rows never interact). The class-probability and mutual-information gradients are
vector-Jacobian products of the same forward pass (one backward pass for two classes, where
``p_other = 1 - p_target``; two otherwise); the mutual information's cotangent comes
from a forward pass without gradients over all rows first (it couples the T samples of a path
point, which may fall in different chunks). A deterministic setting is computed once (spread 0);
a deep ensemble's sample ``t`` is member ``t mod M``, each member explained once; a weight
posterior's sample ``t`` is its weight draw ``t`` (:class:`uqcore.nets.posterior.Drawn`).

Captum (the field's attribution library) explains one output per example; the mutual
information here is a function of all T samples of an input at once, and the noise must follow
the sample number through Captum's step expansion, so the few lines of the method are written
here instead (``tests/uqcore/inference/test_salience.py`` checks them against hand-computed values).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch
from torch import nn

from uqcore.build import DeepEnsemble
from uqcore.exceptions import ConfigError, InputError
from uqcore.nets.model import check_batch
from uqcore.nets.noise import SampleNoise, example_keys
from uqcore.nets.posterior import Drawn, posterior_of
from uqcore.runtime import memory_budget as runtime_budget
from uqcore.settings import ForwardSettings, SamplingSettings, is_stochastic, resolve

METHODS = ("gradient_x_input", "integrated_gradients")
MAX_STEPS = 256
MAX_SAMPLES = 1_000
BUDGET_FACTOR = 4  # a chunk keeps its activations for the backward pass: 4x a sampling chunk


@dataclass(frozen=True)
class Salience:
    """One text's attributions. ``L`` = its tokens (``[CLS]`` first), ``T`` = samples.

    ``probs [T, C]``: every sample's probabilities at the input (what
    :func:`uqcore.inference.sampling. sample` gives). ``prob [T, L]``: each token's attribution of
    ``p_t(target)``. ``mi [L]``: of the mutual information of the T samples (None when every sample
    is the same: it is 0 everywhere). ``base_probs [T, C]``: at the baseline (integrated gradients),
    ``prob_gap [T]`` = ``prob.sum(1) - (p_t(x) - p_t(x0))`` and ``mi_gap`` the same for the
    mutual information (``mi_value - mi_base``): the completeness gaps. ``members [T]``: the
    ensemble member behind each sample. ``stochastic``: whether the samples differ.
    ``straight_through``: the samples are hard (one-hot) attention, whose gradient is 0 almost
    everywhere; the attributions are then those of the straight-through surrogate (the soft
    sample's gradient), and the completeness gap says how far they are from the real change."""

    method: str
    steps: int
    target: int
    seed: int
    probs: torch.Tensor
    prob: torch.Tensor
    mi: torch.Tensor | None
    mi_value: float
    stochastic: bool
    base_probs: torch.Tensor | None = None
    prob_gap: torch.Tensor | None = None
    mi_base: float | None = None
    mi_gap: float | None = None
    members: torch.Tensor | None = None
    straight_through: bool = False


def mutual_information(p: torch.Tensor) -> torch.Tensor:
    """``H[mean_t p_t] - mean_t H[p_t]`` of ``p [T, ..., C]`` (nats, differentiable; ``0 log 0
    = 0``). -> ``[...]``"""

    def entropy(q: torch.Tensor) -> torch.Tensor:
        return -(q * torch.log(q.clamp_min(1e-30))).sum(-1)

    return entropy(p.mean(0)) - entropy(p).mean(0)


def _check(model, ids, mask, T, seed, method, steps, target, hold):
    cfg = model.cfg
    if method not in METHODS:
        raise ConfigError(f"method must be one of {METHODS}, got {method!r}.")
    if isinstance(T, bool) or not isinstance(T, int) or not 1 <= T <= MAX_SAMPLES:
        raise ConfigError(
            f"T must be an integer in [1, {MAX_SAMPLES}] for attributions, got {T!r}."
        )
    if isinstance(seed, bool) or not isinstance(seed, int) or not 0 <= seed < 2**63:
        raise ConfigError(f"seed must be an integer in [0, 2^63), got {seed!r}.")
    if isinstance(steps, bool) or not isinstance(steps, int) or not 1 <= steps <= MAX_STEPS:
        raise ConfigError(f"steps must be an integer in [1, {MAX_STEPS}], got {steps!r}.")
    if not isinstance(target, int) or not 0 <= target < cfg.num_classes:
        raise ConfigError(f"target must be a class in [0, {cfg.num_classes}), got {target!r}.")
    check_batch(ids, mask, cfg)
    if ids.shape[0] != 1:
        raise InputError(f"attribute explains one text: ids must be [1, L], got {list(ids.shape)}.")
    if hold.shape != (ids.shape[1],) or hold.dtype != torch.bool:
        raise InputError(
            f"hold must be bool [L={ids.shape[1]}], got {hold.dtype} {list(hold.shape)}."
        )


def _row_bytes(cfg, length: int) -> int:
    """Bytes one row keeps for its backward pass (activations of every layer), roughly."""
    per_layer = 4 * length * (16 * cfg.d_model + 4 * cfg.d_ff)
    per_layer += 4 * 8 * cfg.n_heads * length * length
    return cfg.n_layers * per_layer + 4 * length * cfg.d_model * 4


@dataclass
class _Unit:
    """What runs as one differentiable computation: a model (or one ensemble member) and how
    many independently-noised units it has (T samples, or 1 without noise)."""

    model: nn.Module
    count: int
    noisy: bool


def _units(model, fs: ForwardSettings, T: int, seed: int, first_sample: int):
    """What runs as one differentiable computation each, and which serves sample ``t``:
    ``(units, members [T] or None, stochastic, index [T])`` (``index[t]``: sample t's unit for
    several units, else its row of the one unit)."""
    if isinstance(model, DeepEnsemble):
        units = [_Unit(m, 1, False) for m in model.members]
        members = (torch.arange(T) + first_sample) % len(units)  # [T]
        return units, members, len(units) > 1, members  # sample t -> its unit
    noisy = is_stochastic(model.cfg, fs)
    if posterior_of(model) is not None and noisy:  # Laplace: one unit per weight draw
        units = [
            _Unit(Drawn(model, seed, first_sample + t, fs.noise_scale), 1, False) for t in range(T)
        ]
        return units, None, True, torch.arange(T)
    index = torch.arange(T) if noisy else torch.zeros(T, dtype=torch.long)
    return [_Unit(model, T if noisy else 1, noisy)], None, noisy, index


def attribute(
    model: nn.Module,
    ids: torch.Tensor,  # [1, L] long
    mask: torch.Tensor,  # [1, L] bool
    T: int,
    seed: int,
    target: int,
    *,
    baseline_id: int,
    hold: torch.Tensor,  # [L] bool: positions kept at their own embedding ([CLS], [SEP])
    settings: SamplingSettings | ForwardSettings | None = None,
    method: str = "integrated_gradients",
    steps: int = 32,
    first_sample: int = 0,
    temperature: float | None = None,
    with_mi: bool = True,
    memory_budget: int | None = None,
    progress=None,
) -> Salience:
    """Attribute samples ``first_sample .. first_sample + T - 1`` of one text (module doc).

    ``baseline_id``: the token whose embedding is the baseline (the vocabulary's padding id).
    ``temperature``: divide each sample's logits by it before the softmax (temperature
    scaling), as the explorer does when asked. ``progress(fraction)`` is called after each
    chunk. ``memory_budget``: bytes of activations per chunk (default: :data:`BUDGET_FACTOR`
    times the device's sampling budget, :func:`uqcore.runtime.memory_budget`).
    Raises :class:`ConfigError` / :class:`InputError` for bad arguments. Never changes
    ``model``; runs with gradients whatever the caller's grad mode (not under
    ``torch.inference_mode``)."""
    _check(model, ids, mask, T, seed, method, steps, target, hold)
    if torch.is_inference_mode_enabled():
        raise ConfigError("attribute needs gradients: call it outside torch.inference_mode().")
    cfg = model.cfg
    fs = settings if isinstance(settings, ForwardSettings) else resolve(cfg, settings)
    fs = dataclasses.replace(fs, need_kl=False)
    scale = 1.0 if temperature is None else float(temperature)
    steps = 1 if method == "gradient_x_input" else steps
    alphas = (
        [1.0]
        if steps == 1 and method == "gradient_x_input"
        else [(s + 0.5) / steps for s in range(steps)]
    )
    units, members, stochastic, index = _units(model, fs, T, seed, first_sample)
    budget = BUDGET_FACTOR * runtime_budget(ids.device) if memory_budget is None else memory_budget
    per_chunk = max(1, budget // _row_bytes(cfg, ids.shape[1]))
    key = example_keys(ids, mask)  # [1] the text's noise key
    ends = [0.0, 1.0] if method == "integrated_gradients" else [1.0]
    # one noisy model whose T rows fit a chunk: each chunk computes its points' MI cotangent
    inline = with_mi and stochastic and len(units) == 1 and units[0].count <= per_chunk
    second = with_mi and stochastic and cfg.num_classes > 2  # see _Runner.grads
    first = [] if inline else alphas  # else the path points' probabilities first
    total = sum(u.count for u in units) * (len(first) + len(alphas) * (1 + second) + len(ends))
    done = [0]

    def tick(rows: int) -> None:
        done[0] += rows
        if progress is not None:
            progress(min(1.0, done[0] / total))

    run = _Runner(ids, mask, fs, seed, first_sample, key, baseline_id, hold, scale, per_chunk)
    with torch.no_grad():  # the probabilities at the ends (and the path points)
        at = [run.probs(u, first + ends, tick) for u in units]  # [count, A + E, C] each
    unit_probs = [a[:, : len(first)] for a in at]  # [count, S or 0, C]
    sample_probs = _per_sample(at, index, units, slice(len(first), None))  # [T, E, C]
    cot_mi = None
    if with_mi and stochastic and not inline:
        path = _per_sample(unit_probs, index, units, slice(None))  # [T, S, C]
        path = path.detach().requires_grad_(True)
        (grad_path,) = torch.autograd.grad(mutual_information(path).sum(), path)  # [T, S, C]
        cot_mi = [torch.zeros_like(p) for p in unit_probs]
        for t in range(T):  # each sample's share, to the unit behind it
            u, row = _where(t, index, units)
            cot_mi[u][row] += grad_path[t]
    prob_units, mi_units = [], []
    for u, unit in enumerate(units):
        got = run.grads(
            unit, alphas, target, None if cot_mi is None else cot_mi[u], tick, mi_inline=inline
        )
        prob_units.append(got[0])  # [count, L]
        mi_units.append(got[1])  # [count, L] or None
    prob = torch.stack(
        [prob_units[u][r] for u, r in (_where(t, index, units) for t in range(T))]
    )  # [T, L]
    probs_in = sample_probs[:, -1]  # [T, C] at the input
    mi_value = float(mutual_information(probs_in)) if stochastic else 0.0
    out = Salience(
        method=method,
        steps=steps,
        target=target,
        seed=seed,
        probs=probs_in,
        prob=prob,
        mi=None,
        mi_value=mi_value,
        stochastic=stochastic,
        members=members,
        straight_through=bool(fs.hard) and stochastic,
    )
    if cot_mi is not None or inline:
        out = dataclasses.replace(out, mi=sum(m.sum(0) for m in mi_units))  # [L]
    if method == "integrated_gradients":
        base = sample_probs[:, 0]  # [T, C]
        gap = prob.sum(1) - (probs_in[:, target] - base[:, target])  # [T]
        out = dataclasses.replace(out, base_probs=base, prob_gap=gap)
        if out.mi is not None:
            mi_base = float(mutual_information(base))
            gap = float(out.mi.sum()) - (mi_value - mi_base)
            out = dataclasses.replace(out, mi_base=mi_base, mi_gap=gap)
    return out


def _where(t: int, index: torch.Tensor, units: list[_Unit]) -> tuple[int, int]:
    """(unit, row in that unit) of sample ``t``."""
    if len(units) > 1:
        return int(index[t]), 0
    return 0, int(index[t])


def _per_sample(per_unit: list[torch.Tensor], index, units, cols) -> torch.Tensor:
    """``[T, A, C]`` from each unit's ``[count, A', C]`` (sample t -> its unit's row)."""
    return torch.stack(
        [per_unit[u][r, cols] for u, r in (_where(t, index, units) for t in range(len(index)))]
    )


class _Runner:
    """Forward passes of one text on interpolated embeddings, chunk by chunk."""

    def __init__(self, ids, mask, fs, seed, first, key, baseline_id, hold, scale, per_chunk):
        self.ids, self.mask, self.fs = ids, mask, fs
        self.seed, self.first, self.key = seed, first, key
        self.baseline_id, self.hold, self.scale = baseline_id, hold, scale
        self.per_chunk = per_chunk

    def _ends(self, model) -> tuple[torch.Tensor, torch.Tensor]:
        """``x [L, D]`` the text's token embeddings and ``x0 [L, D]`` the baseline."""
        with torch.no_grad():
            x = model.embed(self.ids[0]).detach()  # [L, D]
            pad = model.embed.weight[self.baseline_id].detach()  # [D]
            x0 = torch.where(self.hold[:, None], x, pad.expand_as(x))
        return x, x0

    def _chunks(self, unit: _Unit, n_points: int):
        """(first unit row, rows, first point, points) chunks of ``count x n_points`` rows:
        every unit row of a few points at a time when they fit (the mutual information of a
        point is then computed inside its chunk), else one point of some unit rows."""
        if unit.count <= self.per_chunk:
            per, points = unit.count, max(1, min(n_points, self.per_chunk // unit.count))
        else:
            per, points = self.per_chunk, 1
        for u0 in range(0, unit.count, per):
            for s0 in range(0, n_points, points):
                yield u0, min(per, unit.count - u0), s0, min(points, n_points - s0)

    def _forward(self, unit: _Unit, u0, nu, alphas: torch.Tensor, x, x0, grad: bool):
        """Probabilities ``[nu * P, C]`` (rows ``u * P + s``) and the embeddings leaf."""
        n_points = alphas.shape[0]
        emb = x0 + alphas[:, None, None] * (x - x0)  # [P, L, D]
        emb = emb.repeat(nu, 1, 1)  # [nu * P, L, D] unit-major, as the noise lays rows out
        if grad:
            emb = emb.detach().requires_grad_(True)
        rows = nu * n_points
        noise = None
        if unit.noisy:
            noise = SampleNoise(
                self.seed, self.first + u0, nu, n_points, self.ids.device, self.key.repeat(n_points)
            )
        out = unit.model(
            self.ids.expand(rows, -1),
            self.mask.expand(rows, -1),
            self.fs,
            noise,
            token_embeddings=emb,
        )
        return torch.softmax(out.logits / self.scale, -1), emb  # [rows, C]

    def probs(self, unit: _Unit, alphas: list[float], tick) -> torch.Tensor:
        """``[count, A, C]`` probabilities at every path point, no gradients."""
        x, x0 = self._ends(unit.model)
        a = torch.tensor(alphas, dtype=x.dtype, device=x.device)
        out = torch.empty(unit.count, len(alphas), unit.model.cfg.num_classes, device=x.device)
        for u0, nu, s0, ns in self._chunks(unit, len(alphas)):
            p, _ = self._forward(unit, u0, nu, a[s0 : s0 + ns], x, x0, grad=False)
            out[u0 : u0 + nu, s0 : s0 + ns] = p.view(nu, ns, -1)
            tick(nu * ns)
        return out

    def grads(
        self,
        unit: _Unit,
        alphas: list[float],
        target: int,
        cot_mi: torch.Tensor | None,
        tick,
        mi_inline: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Each unit row's attribution ``[count, L]`` of ``p(target)`` (and of the mutual
        information, whose cotangent on the rows' probabilities ``[count, S, C]`` is
        ``cot_mi``), averaged over the path points. With two classes ``p_other = 1 -
        p_target``, so any cotangent ``c`` gives ``(c_target - c_other)`` times the gradient of
        ``p_target``: one backward pass serves both; otherwise a second one runs.
        ``mi_inline``: every chunk holds all the unit's rows (samples) of its points, so the
        mutual information's cotangent is computed from the chunk's own probabilities."""
        x, x0 = self._ends(unit.model)
        diff = x - x0  # [L, D]
        a = torch.tensor(alphas, dtype=x.dtype, device=x.device)
        n = len(alphas)
        classes = unit.model.cfg.num_classes
        prob = torch.zeros(unit.count, x.shape[0], device=x.device)  # [count, L]
        mi = None if cot_mi is None and not mi_inline else torch.zeros_like(prob)
        with torch.enable_grad():
            for u0, nu, s0, ns in self._chunks(unit, n):
                p, emb = self._forward(unit, u0, nu, a[s0 : s0 + ns], x, x0, grad=True)
                one_hot = torch.zeros_like(p)
                one_hot[:, target] = 1.0
                c_mi = None
                if mi_inline:
                    at = p.detach().view(nu, ns, -1).requires_grad_(True)  # [T, ns, C]
                    (c_mi,) = torch.autograd.grad(mutual_information(at).sum(), at)
                    c_mi = c_mi.reshape(nu * ns, -1)
                elif mi is not None:
                    c_mi = cot_mi[u0 : u0 + nu, s0 : s0 + ns].reshape(nu * ns, -1)
                shared = c_mi is not None and classes == 2
                again = c_mi is not None and not shared
                (g,) = torch.autograd.grad(p, emb, one_hot, retain_graph=again)
                per_row = (g * diff).sum(-1)  # [rows, L]
                prob[u0 : u0 + nu] += per_row.view(nu, ns, -1).sum(1).detach() / n
                if shared:
                    k = c_mi[:, target] - c_mi[:, 1 - target]  # [rows]
                    mi_row = per_row * k[:, None]
                elif again:
                    (g,) = torch.autograd.grad(p, emb, c_mi)
                    mi_row = (g * diff).sum(-1)
                if c_mi is not None:
                    mi[u0 : u0 + nu] += mi_row.view(nu, ns, -1).sum(1).detach() / n
                tick(nu * ns * (2 if again else 1))
        return prob, mi
