"""Encoder layers: multi-head attention (projections + family kernel) and the pre-LN block.

Dropout placement:
* standard families (as BERT and fairseq's defaults): embeddings, attention probabilities, the
  attention sub-layer's output and the FFN sub-layer's output; none inside the FFN;
* BayesFormer: three independent masks per head on the *inputs* of Q, K and V, one mask on the
  FFN input (each shared over positions, as variational dropout prescribes), and nothing on
  attention probabilities or inside the FFN.
Dropout is applied only when ``ForwardSettings.dropout_on`` and a noise source are given.
"""

from __future__ import annotations

import dataclasses

import torch
from torch import nn

from uqcore.config import ModelConfig
from uqcore.families import PLAIN
from uqcore.kernels.common import KernelRequest
from uqcore.nets.linear import LoRALinear, linear
from uqcore.nets.maps import LayerMaps
from uqcore.nets.noise import SampleNoise, add_dropout, dropout, dropout_attend
from uqcore.nets.projection import masked_head_projection
from uqcore.nets.rotary import apply_rotary
from uqcore.runtime import one_thread
from uqcore.settings import ForwardSettings


def widest_query_rows(cfg: ModelConfig, length: int, full_rows: bool, s: ForwardSettings) -> int:
    """Query rows of the largest attention tensor a forward pass of ``cfg`` builds for
    ``length`` tokens: every earlier layer attends from all tokens, the last one from [CLS]
    only unless ``full_rows`` (captured maps) or the family needs every query under the
    settings ``s`` as the pass runs them (EM). For sizing chunks and micro-batches."""
    if cfg.n_layers > 1 or full_rows or cfg.spec.needs_every_query(s):
        return length
    return 1


ROW_MAPS = ("attention", "centroids", "posterior_mean", "attention_before_em")  # per query row


class MultiHeadAttention(nn.Module):
    """Projections and heads around the family's attention kernel, bound once here.

    The family's learnable tensors (``FamilySpec.weights``: H-STO's ``centroids``, BAM's
    ``prior_w1``/``prior_b1``/``prior_w2``) are registered on this module under their names.

    Options for decoders (:mod:`uqcore.nets.decoder`), off by default: ``n_kv_heads`` < ``n_heads``
    (grouped-query attention: ``qkv`` projects ``H + 2 H_kv`` heads and each key / value head
    serves ``H / H_kv`` query heads, repeated before the kernel); ``qkv_bias`` / ``out_bias``
    False drop the projections' biases; ``forward(..., rotary=(cos, sin))`` turns ``q`` and
    ``k`` by their positions (:mod:`uqcore.nets.rotary`) before the scores. The kernel then sees
    ``H`` heads as always, and takes the mask it is given (a per-query causal mask included).
    """

    def __init__(
        self,
        cfg: ModelConfig,
        index: int = 0,
        *,
        n_kv_heads: int | None = None,
        qkv_bias: bool = True,
        out_bias: bool = True,
    ):
        super().__init__()
        self.cfg = cfg
        stochastic = cfg.is_stochastic_layer(index)
        self.spec = spec = cfg.spec if stochastic else PLAIN
        params = cfg.attention if stochastic else PLAIN.params()
        d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head
        self.n_kv_heads = kv = h if n_kv_heads is None else n_kv_heads
        if kv < 1 or h % kv:
            raise ValueError(f"n_kv_heads={kv} must divide n_heads={h}.")
        self.qkv = nn.Linear(d, (h + 2 * kv) * dh, bias=qkv_bias)
        self.proj = nn.Linear(d, d, bias=out_bias)
        self.kernel = spec.bind(params)
        self.variational = cfg.spec.dropout_site == "variational"  # the family's, every layer
        self.weight_names = []
        for name, param in spec.weights(params, h, dh).items():
            self.register_parameter(name, param)
            self.weight_names.append(name)
        # key-side H-STO: other query rows reuse the head rows' key assignment
        self.shares_key_assign = getattr(params, "centroid_side", None) == "key"

    def _project(
        self,
        x: torch.Tensor,
        s: ForwardSettings,
        noise: SampleNoise | None,
        rotary: tuple[torch.Tensor, torch.Tensor] | None = None,
    ):
        """``x [N, L, D]`` -> ``q, k, v`` each ``[N, H, L, d_h]`` (``rotary``: ``(cos, sin)``
        ``[N, L, d_h]`` applied to ``q`` and ``k``; grouped key / value heads repeated)."""
        n, length, d = x.shape
        h, kv, dh = self.cfg.n_heads, self.n_kv_heads, self.cfg.d_head
        if self.variational and s.dropout_on and noise is not None:
            # independent masks on the inputs of Q, K and V for every head, shared over positions
            keep = noise.keep_mask(s.dropout, h + 2 * kv, d)  # [N, H + 2 H_kv, D]
            weight = (
                self.qkv.merged_weight() if isinstance(self.qkv, LoRALinear) else self.qkv.weight
            )
            bias = self.qkv.bias if self.qkv.bias is not None else weight.new_zeros(len(weight))
            out = masked_head_projection(x, weight, bias, keep, 1 / (1 - s.dropout))
        else:
            out = linear(x, self.qkv)  # [N, L, (H + 2 H_kv) d_h]
        if kv == h and rotary is None:
            qkv = out.view(n, length, 3, h, dh).permute(2, 0, 3, 1, 4)  # [3, N, H, L, d_h]
            return qkv[0], qkv[1], qkv[2]
        heads = out.view(n, length, h + 2 * kv, dh).transpose(1, 2)  # [N, H + 2 H_kv, L, d_h]
        q, k, v = heads.split([h, kv, kv], dim=1)  # [N, H, L, d_h], [N, H_kv, L, d_h] x2
        if rotary is not None:
            q, k = apply_rotary(q, *rotary), apply_rotary(k, *rotary)
        if kv != h:  # each key / value head serves H / H_kv consecutive query heads
            k, v = (t.repeat_interleave(h // kv, dim=1) for t in (k, v))  # [N, H, L, d_h]
        return q, k, v

    def _kernel(self, q, k, v, mask, s: ForwardSettings, noise, req: KernelRequest):
        """Run the bound kernel on the query rows in ``q`` (keys ``k``, ``v`` all tokens).

        Standard dropout on attention probabilities is applied here (BayesFormer drops inputs
        instead). Returns ``(out [N, H, Lq, d_h] or None, KernelOut)``."""
        drop = s.drop_p > 0 and noise is not None and not self.variational
        weights = {name: getattr(self, name) for name in self.weight_names}
        call = dataclasses.replace(req, output=False) if drop and req.output else req
        ko = self.kernel(q, k, v, mask, s, noise, weights, call)
        out = ko.out
        if drop and req.output:
            out = dropout_attend(ko.maps.attention, v, s.dropout, noise)  # on attention probs
        return out, ko

    def forward(
        self,
        x: torch.Tensor,  # [N, L, D]
        mask: torch.Tensor,  # [N, L]
        s: ForwardSettings,
        noise: SampleNoise | None,
        capture: bool = False,
        rows: int | None = None,
        repeats: int = 1,
        prepared: tuple | None = None,
        rotary: tuple[torch.Tensor, torch.Tensor] | None = None,
    ) -> tuple[torch.Tensor, LayerMaps, torch.Tensor | None]:
        """Returns ``(y [N, rows or L, D], maps, kl [N] or None)``; ``maps`` is empty unless
        ``capture``. ``repeats``: ``x`` holds unique rows whose projections are copied
        ``repeats`` times (sample-major), unless the kernel's
        :class:`uqcore.kernels.common.Shortcut` applies: only the first ``rows`` rows' output is
        wanted, no maps, no KL, no dropout. It then runs on the unique rows with only the noisy
        part per sample. ``prepared``: ``(parts, v, memo)``, the shortcut's parts and the values
        ``v`` of the unique rows, already computed (a prefix kept them; ``x`` is then not read),
        and a :class:`uqcore.inference.prefix.ScoresMemo` (or None) holding or receiving the noisy
        scores of these samples. ``rotary``: ``(cos, sin) [N / repeats, L, d_h]``, the rotary
        tables of the rows (None: no rotary positions, the encoders).

        ``rows`` (the last layer, which only needs [CLS]): only the first ``rows`` query rows
        are attended, with noise from ``noise``. The other rows are computed only when they
        are captured, with noise from ``noise.side()``, so capturing never changes the output.
        BAM's KL covers the attention rows the prediction uses (every row of earlier layers,
        the [CLS] row here): the other rows are not latent variables of the classifier.
        The Probabilistic Transformer's EM needs every query, so with EM iterations it computes
        all rows (it has no noise); without EM (training) it attends from [CLS] like the rest.
        """
        if prepared is not None:
            parts, v, memo = prepared
            return self._shortcut(parts, v, mask, s, noise, repeats, memo), LayerMaps(), None
        q, k, v = self._project(x, s, noise, rotary)  # [N / repeats, H, L, d_h] each
        split = rows is not None and not self.spec.needs_every_query(s)
        if self.shortcut_applies(s, capture, repeats) and split:
            parts = self.kernel.shortcut.prepare(q[:, :, :rows], k, self._weights())
            return self._shortcut(parts, v, mask, s, noise, repeats), LayerMaps(), None
        if repeats > 1:  # sample-major copies of deterministic projections
            q, k, v = (t.repeat(repeats, 1, 1, 1) for t in (q, k, v))
        head_q = q[:, :, :rows] if split else q  # [N, H, rows or L, d_h]
        req = KernelRequest(
            weights=capture,
            output=True,
            need_kl=s.need_kl,
            query_mask=mask[:, :rows] if split else None,
        )
        out, ko = self._kernel(head_q, k, v, mask, s, noise, req)
        kl = ko.maps.kl_per_head  # [N, H] or None
        maps = ko.maps if capture else LayerMaps()
        if split and capture:
            maps = self._tail(q[:, :, rows:], k, v, mask, rows, s, noise, maps)
        out = out if rows is None else out[:, :, :rows]
        n, _, length, _ = out.shape
        y = linear(out.transpose(1, 2).reshape(n, length, self.cfg.d_model), self.proj)
        return y, maps, None if kl is None else kl.sum(-1)  # [N, L', D], maps, [N]

    def _weights(self) -> dict[str, torch.Tensor]:
        return {name: getattr(self, name) for name in self.weight_names}

    def shortcut_applies(self, s: ForwardSettings, capture: bool, repeats: int) -> bool:
        """Whether the kernel's shortcut computes this call (see :meth:`forward`)."""
        return (
            getattr(self.kernel, "shortcut", None) is not None
            and repeats > 1
            and not capture
            and not s.need_kl
            and s.drop_p == 0
        )

    def prepare(self, x: torch.Tensor, s: ForwardSettings, rows: int = 1):
        """``(parts, v)`` of the unique rows ``x [B, L, D]`` (the attention's input): what the
        shortcut needs, deterministic (kept by :mod:`uqcore.inference.prefix`)."""
        q, k, v = self._project(x, s, None)  # [B, H, L, d_h] each
        return self.kernel.shortcut.prepare(q[:, :, :rows], k, self._weights()), v

    def _shortcut(self, parts, v, mask, s, noise, repeats: int, memo=None) -> torch.Tensor:
        """The shortcut's output for ``repeats`` copies -> ``y [R*B, rows, D]``. ``memo``
        (:class:`uqcore.inference.prefix.ScoresMemo`): noisy scores given (their draws are skipped)
        or kept for a later call."""
        cut = self.kernel.shortcut
        unique = mask[: mask.shape[0] // repeats]  # [B, L]
        with one_thread(v.device):  # per-sample elementwise passes and small matmuls
            if memo is not None and memo.value is not None:
                z = memo.value  # [R*B, H, Lq, L]
                if noise is not None:
                    noise.skip(memo.draws)
            else:
                counted = memo is not None and noise is not None  # a memo comes with SampleNoise
                before = noise.draws if counted else 0
                z = cut.noisy(parts, v, unique, s, noise, repeats)  # [R*B, H, Lq, L]
                if memo is not None:
                    memo.value, memo.draws = z, (noise.draws - before) if counted else 0
            out = cut.finish(z, v, s, repeats)  # [R*B, H, Lq, d_h]
        n, _, length, _ = out.shape
        return linear(out.transpose(1, 2).reshape(n, length, self.cfg.d_model), self.proj)

    def _tail(self, q, k, v, mask, rows, s, noise, head: LayerMaps) -> LayerMaps:
        """``head`` with attention rows ``rows..L-1`` of the last layer (never part of the
        prediction) added. Key-side H-STO reuses the head rows' centroid assignment, so all rows
        see one sample of the keys (whose assignment, per key, is then the whole map)."""
        side = noise.side() if noise is not None else None
        key_assign = head.centroids if self.shares_key_assign else None
        req = KernelRequest(
            weights=True,
            output=False,
            need_kl=False,
            query_mask=mask[:, rows:],
            key_assign=key_assign,
        )
        _, ko = self._kernel(q, k, v, mask, s, side, req)
        rest = ko.maps

        def rows(name: str, value: torch.Tensor) -> torch.Tensor:
            extra = getattr(rest, name)
            if (
                name not in ROW_MAPS
                or extra is None
                or (name == "centroids" and key_assign is not None)
            ):
                return value  # per key (prior, key-side centroids) or per head (KL): complete
            return torch.cat([value, extra], dim=2)  # [N, H, L, ...]

        return head.map(rows)


class EncoderLayer(nn.Module):
    """Pre-LN block: ``x + Attn(LN(x))`` then ``x + FFN(LN(x))``."""

    def __init__(self, cfg: ModelConfig, index: int = 0):
        super().__init__()
        self.cfg = cfg
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.attn = MultiHeadAttention(cfg, index)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.ff1 = nn.Linear(cfg.d_model, cfg.d_ff)
        self.ff2 = nn.Linear(cfg.d_ff, cfg.d_model)

    def attention_input(self, x: torch.Tensor) -> torch.Tensor:
        """What the attention sub-layer reads from the block's input: ``LN(x)`` (pre-LN)."""
        return self.norm1(x)

    def forward(
        self,
        x: torch.Tensor,  # [N, L, D]
        mask: torch.Tensor,  # [N, L]
        s: ForwardSettings,
        noise: SampleNoise | None,
        capture: bool = False,
        cls_only: bool = False,
        repeats: int = 1,
        prepared: tuple | None = None,
    ):
        """``x [N, L, D]`` -> ``(x [N, L, D] or [N, 1, D] if cls_only, maps, kl [N] or None)``.
        ``prepared``: the attention shortcut's parts of these rows, already computed (``x`` then
        holds the [CLS] row only; see :meth:`MultiHeadAttention.forward`).

        ``cls_only`` (the last layer): attention over all tokens as usual, then the residual and
        FFN for the [CLS] row only, which is all the classifier reads. The path does not depend
        on ``capture``, so capturing never changes the numbers. ``repeats > 1``: ``x`` holds the
        unique rows and the output ``repeats`` sample-major copies (the attention input is
        deterministic, so its projections are computed once per unique row).
        """
        bayes = self.attn.variational
        p = s.drop_p
        rows = 1 if cls_only else None
        y, maps, kl = self.attn(
            x if prepared is not None else self.norm1(x),
            mask,
            s,
            noise,
            capture,
            rows,
            repeats,
            prepared,
        )
        x = x.repeat(repeats, 1, 1) if repeats > 1 else x
        x = x if rows is None else x[:, :rows]
        x = x + y if bayes else add_dropout(x, y, p, noise)
        h = self.norm2(x)
        if bayes:
            h = dropout(h, p, noise, shared_dims=(1,))  # one FFN-input mask per sequence
        h = linear(linear(h, self.ff1, relu=True), self.ff2)  # [N, L, D]
        x = x + h if bayes else add_dropout(x, h, p, noise)
        return x, maps, kl
