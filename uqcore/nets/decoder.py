"""A causal decoder classifier (the Llama family, GPT-2) on the library's own attention.

Pre-norm blocks ``x + Attn(N1(x))`` then ``x + MLP(N2(x))``, a final norm and a linear
``score`` head without bias read at the last real token, as Hugging Face's
``*ForSequenceClassification`` heads of these models do (an imported classifier skips its
``pad_token_id`` there, as they do: :func:`pooled_index`). The backbone's params say what
differs: RMSNorm, rotary positions, grouped-query attention and a SwiGLU MLP (Llama, SmolLM,
Qwen2, Mistral) or LayerNorm, learned positions and a GELU (tanh) MLP (GPT-2).

The attention sub-layer is :class:`uqcore.nets.layers.MultiHeadAttention` (grouped heads, biases and
rotary tables as its decoder options), so every family's kernel runs here: the kernel is given
the per-query mask ``[N, L, L]`` (:func:`causal_mask`: the causal mask and the padding), which
puts hidden keys at ``-inf`` before any noise or softmax, so STO's Gumbel noise, H-STO's and
BAM's draws only ever weigh the keys a query may see.

Input contract (differs from the encoders': no [CLS], either padding side): ``ids [N, L]`` long,
``mask [N, L]`` bool, True on real tokens, left or right padding, at least one real token per
row. Positions count the real tokens before each one (``cumsum(mask) - 1``), so a row's
numbers do not depend on its padding (this is what Hugging Face's ``generate`` passes as
``position_ids``; its plain forward counts the padding for GPT-2's learned positions, whereas
rotary scores depend on position differences only). A padded query row attends to itself only,
so it stays finite; no real row ever reads it. ``forward`` returns a
:class:`uqcore.nets.model.ForwardOutput` (``features``: the pooled state the head reads) and takes
the sampler's arguments (``repeats`` copies are computed as they are; no prefix).
"""

from __future__ import annotations

from collections.abc import Collection

import torch
import torch.nn.functional as F
from torch import nn

from uqcore.config import ModelConfig
from uqcore.exceptions import ConfigError, InputError
from uqcore.inference.prefix import Prefix
from uqcore.nets.layers import MultiHeadAttention
from uqcore.nets.linear import linear
from uqcore.nets.maps import LayerMaps
from uqcore.nets.model import ForwardOutput
from uqcore.nets.noise import SampleNoise, add_dropout, dropout
from uqcore.nets.rotary import rotary_tables
from uqcore.settings import ForwardSettings, resolve


def causal_mask(mask: torch.Tensor) -> torch.Tensor:
    """``mask [N, L]`` (True = real token) -> ``[N, L, L]``: query ``i`` may see key ``j`` when
    ``j <= i`` and ``j`` is real; a padded query sees itself only (a finite row)."""
    length = mask.shape[1]
    eye = torch.eye(length, dtype=torch.bool, device=mask.device)  # [L, L]
    causal = torch.ones(length, length, dtype=torch.bool, device=mask.device).tril_()
    return causal & (mask[:, None, :] | eye)  # [N, L, L]


def positions(mask: torch.Tensor) -> torch.Tensor:
    """``[N, L]`` long: how many real tokens come before each token (0 on leading padding)."""
    return (mask.long().cumsum(-1) - 1).clamp_(min=0)


def last_real(mask: torch.Tensor) -> torch.Tensor:
    """``[N]`` long: the index of each row's last real token."""
    index = torch.arange(mask.shape[1], device=mask.device)  # [L]
    return (index * mask.long()).argmax(-1)


def pooled_index(ids: torch.Tensor, mask: torch.Tensor, skip: int | None) -> torch.Tensor:
    """``[N]`` long: the token each row's head reads. ``skip`` None: the last real token.
    Else transformers' ``*ForSequenceClassification`` rule (every architecture here, 5.x:
    ``GenericForSequenceClassification``, GPT-2's own): the rightmost token whose id is not
    ``skip`` (its ``pad_token_id``), here among the real tokens, so a template that appends
    that id to every text is read one token early, as there; 0 when the row holds no other
    token (transformers' argmax of zeros)."""
    keep = mask if skip is None else mask & (ids != skip)  # [N, L]
    return last_real(keep)


class DecoderLayer(nn.Module):
    """Pre-norm block: ``x + Attn(N1(x))`` then ``x + MLP(N2(x))``; the same contract as
    :class:`uqcore.nets.layers.EncoderLayer` with ``rotary`` added and every row kept."""

    def __init__(self, cfg: ModelConfig, index: int = 0):
        super().__init__()
        bp = cfg.backbone_params
        d, f = cfg.d_model, cfg.d_ff
        norm = nn.RMSNorm if bp.norm == "rms" else nn.LayerNorm
        self.norm1 = norm(d, eps=bp.norm_eps)
        self.attn = MultiHeadAttention(
            cfg, index, n_kv_heads=bp.n_kv_heads, qkv_bias=bp.qkv_bias, out_bias=bp.out_bias
        )
        self.norm2 = norm(d, eps=bp.norm_eps)
        self.swiglu = bp.mlp == "swiglu"
        self.ff_gate = nn.Linear(d, f, bias=bp.mlp_bias) if self.swiglu else None
        self.ff1 = nn.Linear(d, f, bias=bp.mlp_bias)
        self.ff2 = nn.Linear(f, d, bias=bp.mlp_bias)

    def mlp(self, h: torch.Tensor) -> torch.Tensor:
        """``[N, L, D]`` -> ``[N, L, D]``: ``down(silu(gate h) * up h)`` (SwiGLU) or
        ``W2 gelu_tanh(W1 h)`` (GPT-2)."""
        if self.swiglu:
            return linear(F.silu(linear(h, self.ff_gate)) * linear(h, self.ff1), self.ff2)
        return linear(F.gelu(linear(h, self.ff1), approximate="tanh"), self.ff2)

    def forward(
        self,
        x: torch.Tensor,  # [N, L, D]
        mask: torch.Tensor,  # [N, L, L] causal_mask
        s: ForwardSettings,
        noise: SampleNoise | None,
        capture: bool = False,
        rotary: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, LayerMaps, torch.Tensor | None]:
        """``x [N, L, D]`` -> ``(x [N, L, D], maps, kl [N] or None)``."""
        variational = self.attn.variational
        p = s.drop_p
        y, maps, kl = self.attn(self.norm1(x), mask, s, noise, capture, rotary=rotary)
        x = x + y if variational else add_dropout(x, y, p, noise)
        h = self.norm2(x)
        if variational:
            h = dropout(h, p, noise, shared_dims=(1,))  # one MLP-input mask per sequence
        h = self.mlp(h)  # [N, L, D]
        x = x + h if variational else add_dropout(x, h, p, noise)
        return x, maps, kl


class DecoderClassifier(nn.Module):
    """Token (+ GPT-2's learned position) embeddings, ``n_layers`` causal pre-norm blocks, a
    final norm and ``head`` (``score``, no bias) on the last real token."""

    last_layer_shortcut = False  # its last layer attends from every query (uqcore.inference.prefix)

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg.validate()
        bp = cfg.backbone_params
        kv = bp.n_kv_heads or cfg.n_heads
        if cfg.n_heads % kv:
            raise ConfigError(f"backbone_params.n_kv_heads={kv} must divide n_heads={cfg.n_heads}.")
        d = cfg.d_model
        self.rotary = bp.positions == "rotary"
        self.embed = nn.Embedding(cfg.vocab_size, d)
        self.pos = None if self.rotary else nn.Embedding(cfg.max_len, d)
        self.layers = nn.ModuleList(DecoderLayer(cfg, i) for i in range(cfg.n_layers))
        self.norm = (nn.RMSNorm if bp.norm == "rms" else nn.LayerNorm)(d, eps=bp.norm_eps)
        self.head = nn.Linear(d, cfg.num_classes, bias=False)

    def _check(self, ids: torch.Tensor, mask: torch.Tensor) -> None:
        if ids.dim() != 2 or mask.shape != ids.shape or mask.dtype != torch.bool:
            raise InputError("ids [batch, length] and a bool mask of the same shape are needed.")
        if ids.shape[1] > self.cfg.max_len:
            raise InputError(
                f"Input has {ids.shape[1]} tokens; the model takes {self.cfg.max_len}."
            )
        if ids.numel() and (int(ids.min()) < 0 or int(ids.max()) >= self.cfg.vocab_size):
            raise InputError(f"Token ids must be in [0, {self.cfg.vocab_size}).")
        if not bool(mask.any(-1).all()):
            raise InputError("every row needs at least one real token (mask True).")

    def _embed(self, ids, pos, s: ForwardSettings, noise, tok=None) -> torch.Tensor:
        """``[N, L, D]``: token (+ position) embeddings with the family's input dropout."""
        tok = self.embed(ids) if tok is None else tok  # [N, L, D]
        p = s.drop_p
        if self.cfg.spec.dropout_site == "variational":
            ones = tok.new_ones(*ids.shape, 1)  # drop whole token / position inputs
            x = tok * dropout(ones, p, noise)
            return x if self.pos is None else x + self.pos(pos) * dropout(ones, p, noise)
        x = tok if self.pos is None else tok + self.pos(pos)
        return dropout(x, p, noise)

    def forward(
        self,
        ids: torch.Tensor,
        mask: torch.Tensor,
        settings: ForwardSettings | None = None,
        noise: SampleNoise | None = None,
        capture: Collection[int] = (),
        repeats: int = 1,
        prefix: Prefix | None = None,
        token_embeddings: torch.Tensor | None = None,
    ) -> ForwardOutput:
        """``ids, mask [N, L]`` -> ``logits [N, C]`` (the contract of the module docstring);
        ``maps[i].attention [N, H, L, L]`` for each captured layer ``i``. ``repeats``: the rows
        are sample-major copies of the first ``N / repeats``; without dropout the embeddings and
        the layers below ``cfg.first_stochastic_layer`` then run once on those and are
        expanded (the same numbers). ``prefix``: what enters that layer for the unique rows,
        already computed (:meth:`prefix_states`; no dropout, nothing below captured)."""
        if repeats < 1 or ids.shape[0] % repeats:
            raise ValueError(f"repeats={repeats} does not divide the {ids.shape[0]} rows.")
        if token_embeddings is not None and (repeats != 1 or prefix is not None):
            raise ValueError("token_embeddings need repeats == 1 and no prefix.")
        self._check(ids, mask)
        s = settings or resolve(self.cfg)
        dropping = s.drop_p > 0 and noise is not None
        shared = 1 if dropping else repeats
        first = self.cfg.first_stochastic_layer if shared > 1 or prefix is not None else 0
        if prefix is not None and (dropping or any(i < first for i in capture)):
            raise ValueError("a prefix needs no dropout and no captured layer below it.")
        if prefix is not None and prefix.prepared is not None:
            raise ValueError("a decoder's prefix holds the hidden states only.")
        unique = ids.shape[0] // shared
        pos = positions(mask)  # [N, L]
        maps: dict[int, LayerMaps] = {}
        kl_total = None
        if prefix is not None:
            x = prefix.x  # [N / shared, L, D]
        else:
            x = self._embed(ids[:unique], pos[:unique], s, noise, token_embeddings)
            x, maps, kl_total = self._run(
                x, mask[:unique], pos[:unique], s, noise, capture, 0, first
            )
            maps = {
                i: m.map(lambda _, v: v.repeat(shared, *([1] * (v.dim() - 1))))
                for i, m in maps.items()
            }
            kl_total = None if kl_total is None else kl_total.repeat(shared)
        x = x.repeat(shared, 1, 1) if shared > 1 else x  # [N, L, D] sample-major
        x, upper, kl = self._run(x, mask, pos, s, noise, capture, first, self.cfg.n_layers)
        maps |= upper
        if kl is not None:
            kl_total = kl if kl_total is None else kl_total + kl
        read = pooled_index(ids, mask, self.cfg.backbone_params.pool_skip_id)  # [N]
        last = x[torch.arange(x.shape[0], device=x.device), read]  # [N, D]
        logits = self.head(self.norm(last))  # [N, C]
        return ForwardOutput(logits=logits, kl=kl_total, maps=maps, features=last)

    def _run(self, x, mask, pos, s, noise, capture, start: int, stop: int):
        """Layers ``start .. stop - 1`` on ``x [N, L, D]`` -> ``(x, maps, kl [N] or None)``."""
        rotary = (
            rotary_tables(pos, self.cfg.d_head, self.cfg.backbone_params.rope_theta, x.dtype)
            if self.rotary
            else None
        )
        allowed = causal_mask(mask)  # [N, L, L]
        maps: dict[int, LayerMaps] = {}
        kl_total = None
        for i in range(start, stop):
            x, layer_maps, kl = self.layers[i](x, allowed, s, noise, i in capture, rotary)
            if layer_maps:
                maps[i] = layer_maps
            if kl is not None:
                kl_total = kl if kl_total is None else kl_total + kl
        return x, maps, kl_total

    def prefix_states(
        self,
        ids: torch.Tensor,
        mask: torch.Tensor,
        settings: ForwardSettings | None = None,
        projections: bool = False,
        capture: Collection[int] = (),
    ) -> Prefix:
        """What enters layer ``cfg.first_stochastic_layer``, without noise or dropout
        (:meth:`forward`'s ``prefix``): ``x [N, L, D]``, with the maps of the layers below it
        in ``capture`` (``below``, each ``[N, H, L, L]``). A decoder keeps no projections (its
        last layer attends from every query)."""
        if projections:
            raise ValueError("a decoder's prefix holds the hidden states only.")
        self._check(ids, mask)
        s = settings or resolve(self.cfg)
        pos = positions(mask)
        x = self._embed(ids, pos, s, None)
        first = self.cfg.first_stochastic_layer
        x, maps, _ = self._run(x, mask, pos, s, None, tuple(capture), 0, first)
        return Prefix(x, below=maps or None)
