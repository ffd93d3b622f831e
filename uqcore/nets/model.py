"""The word-level encoder classifier and the forward pass every backbone's classifier shares.

Contract of ``forward(ids, mask, settings=None, noise=None, capture=())``:
* ``ids [N, L]`` long, ``mask [N, L]`` bool (True = real token; column 0 is [CLS]);
* ``settings``: a resolved :class:`ForwardSettings` (None = the config's inference values);
* ``noise``: the :class:`SampleNoise` for the N rows (None = no noise and no dropout);
* ``capture``: layer indices whose maps (:class:`uqcore.nets.maps.LayerMaps`) go into
  ``ForwardOutput.maps``.
Nothing is stored on the modules between calls, so one model can serve many callers at once.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field

import torch
from torch import nn

from uqcore.config import ModelConfig
from uqcore.exceptions import InputError
from uqcore.inference.prefix import Prefix
from uqcore.nets.layers import EncoderLayer
from uqcore.nets.maps import LayerMaps
from uqcore.nets.noise import SampleNoise, dropout
from uqcore.settings import ForwardSettings, resolve

PAD_ID, UNK_ID, CLS_ID = 0, 1, 2


@dataclass
class ForwardOutput:
    """``logits [N, C]``; ``kl [N]`` summed over layers and heads (BAM only, differentiable);
    ``maps``: layer index -> :class:`LayerMaps` of the captured layers; ``features [N, D]``: the
    last layer's [CLS] state the head reads (for distance-based OOD scores).
    A deep ensemble adds a leading member dimension ``M`` to every tensor."""

    logits: torch.Tensor
    kl: torch.Tensor | None = None
    maps: dict[int, LayerMaps] = field(default_factory=dict)
    features: torch.Tensor | None = None


def check_batch(ids: torch.Tensor, mask: torch.Tensor, cfg: ModelConfig) -> None:
    """Raise :class:`InputError` if ``ids``/``mask`` cannot be fed to a model of ``cfg``."""
    if ids.dim() != 2 or mask.shape != ids.shape:
        raise InputError(
            "ids and mask must both be [batch, length]; "
            f"got {tuple(ids.shape)} and {tuple(mask.shape)}."
        )
    if ids.shape[1] > cfg.max_len:
        raise InputError(
            f"Input has {ids.shape[1]} tokens but the model takes at most {cfg.max_len}; "
            "truncate it (Vocab.encode does)."
        )
    if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= cfg.vocab_size):
        raise InputError(
            f"Token ids must be in [0, {cfg.vocab_size}); "
            "encode text with the checkpoint's vocabulary."
        )
    if mask.dtype != torch.bool or not bool(mask[:, 0].all()):
        raise InputError("mask must be bool with the [CLS] position (column 0) True in every row.")


class StackedEncoder(nn.Module):
    """What every backbone's classifier shares: the forward pass. A subclass defines
    ``cfg``, ``layers`` (blocks with :class:`uqcore.nets.layers.EncoderLayer`'s contract),
    ``_embed(ids, s, noise, tok=None) -> [N, L, D]`` (``tok``: the token embeddings to use
    instead of looking ``ids`` up) and ``_logits(cls [N, D], s, noise) -> [N, C]``."""

    def forward(
        self,
        ids: torch.Tensor,
        mask: torch.Tensor,
        settings: ForwardSettings | None = None,
        noise: SampleNoise | None = None,
        capture: Collection[int] = (),
        repeats: int = 1,
        prefix: torch.Tensor | None = None,
        token_embeddings: torch.Tensor | None = None,
    ) -> ForwardOutput:
        """``repeats``: the rows are ``repeats`` sample-major copies of the first
        ``N / repeats`` rows (as the sampler lays them out). Without dropout, the embeddings and
        the layers up to the first stochastic one are then computed once (:func:`run_layers`).
        ``prefix``: a :class:`uqcore.inference.prefix.Prefix` of the unique rows
        (:meth:`prefix_states`), what enters layer ``cfg.first_stochastic_layer``, already computed:
        the embeddings and the layers below are then skipped (no dropout, nothing below captured).
        ``token_embeddings [N, L, D]``: used in place of the token-embedding lookup
        ``self.embed(ids)`` (positions, types and norms still added), so attributions can
        differentiate with respect to them (:mod:`uqcore.inference.salience`); needs ``repeats ==
        1`` and no ``prefix``."""
        s = settings or resolve(self.cfg)
        if token_embeddings is not None and (repeats != 1 or prefix is not None):
            raise ValueError("token_embeddings need repeats == 1 and no prefix.")
        if repeats < 1 or ids.shape[0] % repeats:
            raise ValueError(f"repeats={repeats} does not divide the {ids.shape[0]} rows.")
        shared = repeats if not (s.drop_p > 0 and noise is not None) else 1
        start = 0
        if prefix is not None:
            start = self.cfg.first_stochastic_layer
            if (s.drop_p > 0 and noise is not None) or any(i < start for i in capture):
                raise ValueError("a prefix needs no dropout and no captured layer below it.")
            if prefix.prepared is not None and start in capture:
                raise ValueError("a prefix of the shortcut's parts cannot show the layer's maps.")
            x, prepared = prefix.x, prefix.attention()  # [N / shared, L or 1, D], (parts, v, memo)
        else:
            x = self._embed(ids[: ids.shape[0] // shared], s, noise, token_embeddings)
            prepared = None
        x, maps, kl = run_layers(
            self.layers, x, mask, s, noise, capture, shared, self.cfg, start, prepared
        )
        logits = self._logits(x[:, 0], s, noise)  # [N, C] from [CLS] (x is [N, 1, D] here)
        return ForwardOutput(logits=logits, kl=kl, maps=maps, features=x[:, 0])

    def prefix_states(
        self,
        ids: torch.Tensor,
        mask: torch.Tensor,
        settings: ForwardSettings | None = None,
        projections: bool = False,
        capture: Collection[int] = (),
    ) -> Prefix:
        """What enters layer ``k = cfg.first_stochastic_layer``, without noise or dropout: what
        :meth:`forward` takes as ``prefix``. It depends on the weights, the tokens and
        ``settings.tau`` (a plain layer's temperature) only. ``x [N, L, D]``; with
        ``projections`` (``k`` is the last layer, which attends from [CLS] only, and its kernel
        has a shortcut) ``x [N, 1, D]`` is the [CLS] row, with the shortcut's parts and the
        values ``v [N, H, L, d_h]`` of layer ``k`` (:meth:`MultiHeadAttention.prepare`).
        ``capture``: layers below ``k`` whose maps the prefix keeps (``below``)."""
        s = settings or resolve(self.cfg)
        first = self.cfg.first_stochastic_layer
        x = self._embed(ids, s, None)  # [N, L, D]
        below = {}
        for i, layer in enumerate(self.layers[:first]):
            x, layer_maps, _ = layer(x, mask, s, None, capture=i in capture)
            if layer_maps:
                below[i] = layer_maps
        if not projections:
            return Prefix(x, below=below or None)
        if first != len(self.layers) - 1:
            raise ValueError("projections are kept for a last-layer prefix only.")
        layer = self.layers[first]
        parts, v = layer.attn.prepare(layer.attention_input(x), s)
        return Prefix(x[:, :1], parts, v, below=below or None)


class EncoderClassifier(StackedEncoder):
    """Word + learned positions, ``n_layers`` pre-LN blocks, [CLS] pooling, a linear head."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg.validate()
        self.embed = nn.Embedding(cfg.vocab_size, cfg.d_model, padding_idx=PAD_ID)
        self.pos = nn.Embedding(cfg.max_len, cfg.d_model)
        self.layers = nn.ModuleList(EncoderLayer(cfg, i) for i in range(cfg.n_layers))
        self.norm = nn.LayerNorm(cfg.d_model)
        self.head = nn.Linear(cfg.d_model, cfg.num_classes)

    def _embed(
        self,
        ids: torch.Tensor,
        s: ForwardSettings,
        noise: SampleNoise | None,
        tok: torch.Tensor | None = None,
    ) -> torch.Tensor:
        n, length = ids.shape
        tok = self.embed(ids) if tok is None else tok  # [N, L, D]
        pos = self.pos.weight[:length].expand(n, length, -1)  # [N, L, D]
        p = s.drop_p
        if self.cfg.spec.dropout_site == "variational":
            # dropout on the one-hot inputs = dropping whole token / position embedding rows
            ones = tok.new_ones(n, length, 1)
            return tok * dropout(ones, p, noise) + pos * dropout(ones, p, noise)
        return dropout(tok + pos, p, noise)

    def _logits(self, cls: torch.Tensor, s: ForwardSettings, noise) -> torch.Tensor:
        """``[N, D]`` final [CLS] states -> ``[N, C]`` logits."""
        return self.head(self.norm(cls))


def run_layers(
    layers: nn.ModuleList,
    x: torch.Tensor,  # [N / shared, L, D] the unique rows
    mask: torch.Tensor,  # [N, L]
    s: ForwardSettings,
    noise: SampleNoise | None,
    capture: Collection[int],
    shared: int,
    cfg: ModelConfig,
    start: int = 0,
    prepared: tuple | None = None,
) -> tuple[torch.Tensor, dict[int, LayerMaps], torch.Tensor | None]:
    """Run the blocks of an encoder; the last attends from [CLS] only. -> ``(x [N, 1, D], maps,
    kl [N] or None)``.

    ``shared > 1``: the ``N`` rows are ``shared`` sample-major copies of the ``N / shared`` rows
    of ``x`` and nothing before the attention draws noise (no dropout). The layers below the
    first stochastic one (``cfg.first_stochastic_layer``) are then deterministic and run once on
    the unique rows; the first stochastic layer computes its projections once and expands them
    to every sample. Their captured maps are repeated for every sample, so the result is the
    same as running every layer on all ``N`` rows. ``start``: ``x`` enters layer ``start``
    (the layers below were run before: a prefix), with layer ``start``'s shortcut parts
    ``prepared`` when the prefix kept them.
    """
    maps: dict[int, LayerMaps] = {}
    kl_total = None
    last = len(layers) - 1
    expand_at = cfg.first_stochastic_layer if shared > 1 else 0
    unique = mask[: mask.shape[0] // shared]  # [N / shared, L]
    for i, layer in enumerate(layers):
        if i < start:
            continue
        below = i < expand_at  # deterministic, on the unique rows
        x, layer_maps, kl = layer(
            x,
            unique if below else mask,
            s,
            noise,
            capture=i in capture,
            cls_only=i == last,
            repeats=shared if i == expand_at else 1,
            prepared=prepared if i == start else None,
        )
        if layer_maps and below:
            layer_maps = layer_maps.map(lambda _, v: v.repeat(shared, *([1] * (v.dim() - 1))))
        if layer_maps:
            maps[i] = layer_maps
        if kl is not None:
            kl_total = kl if kl_total is None else kl_total + kl
    return x, maps, kl_total
