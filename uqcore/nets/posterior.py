"""A Gaussian posterior over some of a classifier's weights (a diagonal Laplace approximation),
and its draws: the weight-space family's "sample".

A Laplace approximation (MacKay 1992; Daxberger et al. 2021, "Laplace Redux") puts a Gaussian on
the trained weights ``theta*``: ``N(theta*, (H + delta I)^-1)`` with ``H`` the curvature of the
training loss (here the diagonal of the generalised Gauss-Newton matrix, summed over the training
texts: :func:`uqcore.inference.laplace.diagonal_ggn`) and ``delta`` the prior precision. It covers
the tensors training made (a pretrained backbone's low-rank adapters, pooler and head; every
weight of a word-level net), never the frozen base.

:class:`Posterior` is a sub-module named :data:`POSTERIOR` of the classifier it covers, holding
one buffer per covered parameter: its curvature ``H`` (same shape), stored in the checkpoint
beside the weights. ``delta`` is the family's :class:`LaplaceParams` (``ModelConfig.attention``).
A draw ``t`` under seed ``s`` is ``theta* + lambda * eps / sqrt(H + delta)`` with ``eps`` a standard
normal drawn on the CPU from a generator keyed by ``(s, t)`` alone, so a sample's weights depend
on neither the batch, nor the chunking, nor the device; ``lambda`` is the noise-scale knob (0: the
trained model; 1: the posterior).
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Literal

import torch
from torch import nn
from torch.func import functional_call

from uqcore.exceptions import ConfigError

POSTERIOR = "posterior"  # the sub-module's name in a classifier (and its checkpoint keys' prefix)


@dataclass(frozen=True)
class LaplaceParams:
    """The Laplace family's structure: ``prior_precision`` ``delta`` (chosen on dev by
    :mod:`uqlab.laplace`), the curvature's ``structure`` (the diagonal of the GGN) and how many
    training texts it was summed over (``fit_rows``: a record of the fit, not a size of the
    model, so the budget's structure bound does not apply to it: CoLA fits over 6,354)."""

    prior_precision: float = 1.0
    structure: Literal["diagonal"] = "diagonal"
    fit_rows: int = field(default=1, metadata={"structure": False})
    # the lowest block the posterior covers (None: every tensor training made). Below it, and in
    # the embeddings, every draw keeps the trained weights, so those layers run once for all
    # samples (Laplace Redux's "subnetwork" choice; laplace-torch's default is the last layer)
    from_block: int | None = None

    def check(self, n_layers: int) -> None:
        """Raise :class:`ConfigError` if ``from_block`` names no block of an ``n_layers`` model."""
        if self.from_block is not None and self.from_block >= n_layers:
            raise ConfigError(
                f"attention.from_block {self.from_block} is not a block of this {n_layers}-layer "
                f"model; use null (every block) or a block in [0, {n_layers - 1}]."
            )


def _key(name: str) -> str:
    """A parameter's name as a buffer name (no dots): ``layers.0.ff1.lora_a`` ->
    ``layers__0__ff1__lora_a``."""
    return name.replace(".", "__")


class Posterior(nn.Module):
    """The curvature of each covered parameter (buffers, zero until fitted) and its draws."""

    def __init__(self, shapes: dict[str, torch.Size]):
        super().__init__()
        self.names: tuple[str, ...] = tuple(sorted(shapes))  # the draw order
        for name in self.names:
            self.register_buffer(_key(name), torch.zeros(shapes[name]))

    def curvature(self, name: str) -> torch.Tensor:
        """``H`` of parameter ``name`` (same shape as the parameter)."""
        return getattr(self, _key(name))

    def set_curvature(self, values: dict[str, torch.Tensor]) -> None:
        """Store a fitted curvature: one tensor per covered name, each >= 0 and finite."""
        if set(values) != set(self.names):
            raise ValueError(f"curvature for {sorted(values)}; expected {list(self.names)}")
        with torch.no_grad():
            for name, value in values.items():
                if not bool(torch.isfinite(value).all()) or bool((value < 0).any()):
                    raise ValueError(f"curvature of {name} must be finite and >= 0")
                self.curvature(name).copy_(value)

    def std(self, name: str, prior_precision: float) -> torch.Tensor:
        """The posterior's standard deviation of ``name``: ``(H + delta)^-1/2``."""
        return torch.rsqrt(self.curvature(name) + prior_precision)

    def draw(
        self,
        params: dict[str, torch.Tensor],
        prior_precision: float,
        seed: int,
        index: int,
        scale: float,
    ) -> dict[str, torch.Tensor]:
        """Weight sample ``index`` under ``seed``: ``{name: theta* + scale * eps * std}`` for
        every covered name (``params`` holds the trained values ``theta*``)."""
        gen = torch.Generator().manual_seed(draw_key(seed, index))
        out = {}
        for name in self.names:
            mean = params[name]
            eps = torch.randn(mean.shape, generator=gen)  # on the CPU: device-independent
            eps = eps.to(device=mean.device, dtype=mean.dtype)
            out[name] = mean + eps.mul_(self.std(name, prior_precision)).mul_(scale)
        return out


def draw_key(seed: int, index: int) -> int:
    """The generator seed of weight sample ``index`` under ``seed`` (a hash: nearby seeds or
    indices give unrelated draws)."""
    digest = hashlib.blake2b(f"laplace:{seed}:{index}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "little") >> 1


def attach_posterior(
    model: nn.Module, frozen: frozenset[str], from_block: int | None = None
) -> nn.Module:
    """Give ``model`` a :class:`Posterior` over every parameter not in ``frozen`` (what training
    made), in place; returns ``model``. With ``from_block``, only over those of the blocks from
    ``from_block`` up and above the blocks (head, pooler): the rest keep their trained values."""
    shapes = {
        n: p.shape
        for n, p in model.named_parameters()
        if n not in frozen and (from_block is None or _block_of(n) >= from_block)
    }
    model.add_module(POSTERIOR, Posterior(shapes))
    return model


def posterior_of(model: nn.Module) -> Posterior | None:
    """The model's weight posterior, or None for a model without one."""
    found = getattr(model, POSTERIOR, None)
    return found if isinstance(found, Posterior) else None


class Drawn:
    """``model`` as weight draw ``index`` under ``seed`` (at ``scale``) makes it, for code that
    runs a model: ``drawn(ids, mask, ...)``, ``drawn.embed``, ``drawn.cfg``. ``model`` itself
    never changes; the weights are drawn again at each call (nothing held between calls)."""

    def __init__(self, model: nn.Module, seed: int, index: int, scale: float):
        self.model, self.seed, self.index, self.scale = model, seed, index, scale
        self.cfg = model.cfg

    def weights(self) -> dict[str, torch.Tensor]:
        """The drawn value of every covered parameter."""
        trained = dict(self.model.named_parameters())
        delta = self.cfg.attention.prior_precision
        return posterior_of(self.model).draw(trained, delta, self.seed, self.index, self.scale)

    def __call__(self, *args, **kwargs):
        return functional_call(self.model, self.weights(), args, kwargs)

    @property
    def embed(self) -> nn.Module:
        """The token embedding table as drawn (the trained one when the posterior leaves it)."""
        table = self.model.embed
        if "embed.weight" not in posterior_of(self.model).names:
            return table
        weight = self.weights()["embed.weight"]
        return nn.Embedding.from_pretrained(weight, freeze=True, padding_idx=table.padding_idx)


ABOVE_THE_BLOCKS = ("head.", "pooler.")  # parameter prefixes read after the last block


def _block_of(name: str) -> float:
    """The block a parameter belongs to: its index under ``layers.``, infinity for the head and
    pooler, -1 for any other (embeddings, a norm outside the blocks): left out by ``from_block``."""
    if name.startswith("layers."):
        return int(name.split(".")[1])
    return float("inf") if name.startswith(ABOVE_THE_BLOCKS) else -1


def drawn_blocks(names: tuple[str, ...], n_layers: int) -> tuple[int, ...] | None:
    """The blocks from the lowest one a draw of ``names`` (covered parameters) changes up to the
    last: the layers below run the trained weights in every sample, so one pass serves them all
    (``ModelConfig.stochastic_layers``); the last block alone when a draw changes only what is
    read after the blocks (head, pooler); None when it changes something below the blocks
    (embeddings, their norm): every layer then differs."""
    below = [n for n in names if not n.startswith(("layers.", *ABOVE_THE_BLOCKS))]
    blocks = [int(n.split(".")[1]) for n in names if n.startswith("layers.")]
    if below:
        return None
    return tuple(range(min(blocks, default=n_layers - 1), n_layers))
