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

import contextlib
import math
import threading

import torch
from torch import nn

from uqcore import kernels
from uqcore.config import ModelConfig
from uqcore.noise import SampleNoise, add_dropout, dropout, dropout_attend
from uqcore.projection import masked_head_projection
from uqcore.settings import ForwardSettings

Trace = dict[str, torch.Tensor]


def linear(x: torch.Tensor, layer: nn.Linear, relu: bool = False) -> torch.Tensor:
    """``layer(x)``, then ReLU if asked, with the fastest CPU kernel for the size.

    Without gradients and from ``ONEDNN_MIN_ROWS`` rows, oneDNN's fused linear (+ ReLU) kernel
    (the one PyTorch's compiler uses on CPU) is 10-20% faster and saves a pass over the output;
    otherwise a matmul plus in-place bias (and ReLU). Both compute the same function; they may
    differ in the last bits, which is why the choice depends on the size only.
    """
    rows = x.numel() // x.shape[-1]
    fast = _ONEDNN is not None and not getattr(_ONEDNN_STATE, "off", False)
    if fast and rows >= ONEDNN_MIN_ROWS and not torch.is_grad_enabled():
        return _ONEDNN(x, layer.weight, layer.bias, "relu" if relu else "none", [], "")
    out = torch.matmul(x, layer.weight.t()).add_(layer.bias)
    return torch.relu_(out) if relu else out


ONEDNN_MIN_ROWS = 128  # measured crossover on a 2-core AVX-512 CPU (docs/performance.md)
_ONEDNN_STATE = threading.local()


@contextlib.contextmanager
def matmul_linear_only():
    """Within this block (this thread only), ``linear`` always takes the plain matmul path.
    For tools that trace aten matmuls, such as FLOP counters, which do not see oneDNN ops."""
    before = getattr(_ONEDNN_STATE, "off", False)
    _ONEDNN_STATE.off = True
    try:
        yield
    finally:
        _ONEDNN_STATE.off = before


_ONEDNN = (
    getattr(torch.ops.mkldnn, "_linear_pointwise", None)
    if torch.backends.mkldnn.is_available()
    else None
)


def needs_every_query(family: str, em_iterations: int) -> bool:
    """Whether the last layer must attend from every token even for a [CLS]-only prediction:
    only the Probabilistic Transformer's EM does (its M-step pulls keys toward every query).
    Without EM (training, or ``em_iterations=0``) it is plain attention."""
    return family == "probtrans" and em_iterations > 0


def widest_query_rows(cfg: ModelConfig, length: int, full_rows: bool, em_iterations: int) -> int:
    """Query rows of the largest attention tensor a forward pass of ``cfg`` builds for
    ``length`` tokens: every earlier layer attends from all tokens, the last one from [CLS]
    only unless ``full_rows`` (captured maps) or EM needs every query (``em_iterations`` as the
    pass runs it). For sizing chunks and micro-batches."""
    if cfg.n_layers > 1 or full_rows or needs_every_query(cfg.family, em_iterations):
        return length
    return 1


class MultiHeadAttention(nn.Module):
    """Projections and heads around one attention kernel chosen by ``cfg.family``."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        d, h, dh = cfg.d_model, cfg.n_heads, cfg.d_head
        self.qkv = nn.Linear(d, 3 * d)
        self.proj = nn.Linear(d, d)
        a = cfg.attention
        if cfg.family == "hsto":
            shape = (h, dh, a.n_centroids) if a.centroids_per_head else (dh, a.n_centroids)
            self.centroids = nn.Parameter(torch.randn(shape) / math.sqrt(dh))
        if cfg.family == "bam" and a.bam_prior == "contextual":
            self.prior_w1 = nn.Parameter(torch.randn(h, dh, a.bam_d_mid) / math.sqrt(dh))
            self.prior_b1 = nn.Parameter(torch.zeros(h, a.bam_d_mid))
            self.prior_w2 = nn.Parameter(torch.randn(h, a.bam_d_mid) / math.sqrt(a.bam_d_mid))

    def _project(self, x: torch.Tensor, s: ForwardSettings, noise: SampleNoise | None):
        """``x [N, L, D]`` -> ``q, k, v`` each ``[N, H, L, d_h]``."""
        n, length, d = x.shape
        h, dh = self.cfg.n_heads, self.cfg.d_head
        if self.cfg.family == "bayesformer" and s.dropout_on and noise is not None:
            # independent masks on the inputs of Q, K and V for every head, shared over positions
            keep = noise.keep_mask(s.dropout, 3 * h, d)  # [N, 3H, D]
            out = masked_head_projection(
                x, self.qkv.weight, self.qkv.bias, keep, 1 / (1 - s.dropout)
            )
            qkv = out.view(n, length, 3, h, dh).permute(2, 0, 3, 1, 4)  # [3, N, H, L, d_h]
            return qkv[0], qkv[1], qkv[2]
        qkv = (
            linear(x, self.qkv).view(n, length, 3, h, dh).permute(2, 0, 3, 1, 4)
        )  # [3, N, H, L, d_h]
        return qkv[0], qkv[1], qkv[2]

    def _prior_logits(self, k: torch.Tensor) -> torch.Tensor:
        """Contextual BAM prior ``W2 relu(W1 k + b1)`` per head. ``[N,H,L,d_h]`` -> ``[N,H,L]``."""
        hidden = torch.relu(
            torch.einsum("nhld,hdm->nhlm", k, self.prior_w1) + self.prior_b1[:, None]
        )
        return torch.einsum("nhlm,hm->nhl", hidden, self.prior_w2)

    def _kernel(
        self,
        q,
        k,
        v,
        mask,
        s: ForwardSettings,
        noise,
        *,
        weights: bool,
        output: bool,
        need_kl: bool,
        query_mask=None,
        key_assign=None,
    ):
        """Run the family's kernel on the query rows in ``q`` (keys ``k``, ``v`` all tokens).

        ``weights``: keep the weights and the family's extras; ``output``: attended values are
        needed (else only weights/extras/KL); dropout on attention probabilities is applied
        here. Returns ``(out [N, H, Lq, d_h] or None, KernelOut)``."""
        a, fam = self.cfg.attention, self.cfg.family
        # standard families drop attention probabilities (BayesFormer drops inputs instead)
        drop = s.dropout_on and s.dropout > 0 and noise is not None and fam != "bayesformer"
        if fam == "sto":
            ko = kernels.sto_attention(q, k, v, mask, s.tau2, s.noise_scale, noise, s.hard)
        elif fam == "hsto":
            ko = kernels.centroid_attention(
                q, k, v, mask, self.centroids, s.tau1, s.tau2, s.noise_scale, noise, s.hard,
                a.centroid_side, key_assign=key_assign,
            )  # fmt: skip
        elif fam == "bam":
            contextual = a.bam_prior == "contextual"
            ko = kernels.bam_attention(
                q, k, v, mask, dist=a.bam_dist,
                prior_logits=(lambda: self._prior_logits(k)) if contextual else None,
                shape_k=a.bam_k, sigma=a.bam_sigma, beta=a.bam_beta,
                prior_sigma=a.bam_prior_sigma, sample=s.bam_sample, noise_scale=s.noise_scale,
                noise=noise, need_kl=need_kl, need_extras=weights, query_mask=query_mask,
            )  # fmt: skip
        elif fam == "probtrans":
            ko = kernels.probtrans_attention(
                q, k, v, mask, 1.0 / s.tau, s.em_precision, s.em_iterations, keep_prior=weights
            )
        else:  # trans, mcdropout, ensemble members, bayesformer
            ko = kernels.softmax_attention(
                q, k, v, mask, s.tau, need_weights=weights, need_output=output and not drop,
                fused=s.fused_attention,
            )  # fmt: skip
        out = ko.out
        if drop and output:
            out = dropout_attend(ko.attn, v, s.dropout, noise)  # dropout on attention probs
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
    ) -> tuple[torch.Tensor, Trace, torch.Tensor | None]:
        """Returns ``(y [N, rows or L, D], trace, kl [N] or None)``; ``trace`` is {} unless
        ``capture``. ``repeats``: ``x`` holds unique rows whose projections are copied
        ``repeats`` times (sample-major).

        ``rows`` (the last layer, which only needs [CLS]): only the first ``rows`` query rows
        are attended, with noise from ``noise``. The other rows are computed only when they
        are captured, with noise from ``noise.side()``, so capturing never changes the output.
        BAM's KL covers the attention rows the prediction uses (every row of earlier layers,
        the [CLS] row here): the other rows are not latent variables of the classifier.
        The Probabilistic Transformer's EM needs every query, so with EM iterations it computes
        all rows (it has no noise); without EM (training) it attends from [CLS] like the rest.
        """
        q, k, v = self._project(x, s, noise)  # [N / repeats, H, L, d_h] each
        if repeats > 1:  # sample-major copies of deterministic projections
            q, k, v = (t.repeat(repeats, 1, 1, 1) for t in (q, k, v))
        split = rows is not None and not needs_every_query(self.cfg.family, s.em_iterations)
        head_q = q[:, :, :rows] if split else q  # [N, H, rows or L, d_h]
        out, ko = self._kernel(
            head_q, k, v, mask, s, noise, weights=capture, output=True, need_kl=s.need_kl,
            query_mask=mask[:, :rows] if split else None,
        )  # fmt: skip
        trace: Trace = {"attn": ko.attn, **ko.extras} if capture else {}
        kl = ko.extras.get("kl")  # [N, H] or None
        if split and capture:
            self._tail(q[:, :, rows:], k, v, mask, rows, s, noise, ko, trace)
        out = out if rows is None else out[:, :, :rows]
        n, _, length, _ = out.shape
        y = linear(out.transpose(1, 2).reshape(n, length, self.cfg.d_model), self.proj)
        return y, trace, None if kl is None else kl.sum(-1)  # [N, L', D], trace, [N]

    def _tail(self, q, k, v, mask, rows, s, noise, head, trace) -> None:
        """Add attention rows ``rows..L-1`` of the last layer (never part of the prediction) to
        the captured ``trace``. Key-side H-STO reuses the head rows' centroid assignment, so
        all rows see one sample of the keys."""
        side = noise.side() if noise is not None else None
        key_assign = None
        if self.cfg.family == "hsto" and self.cfg.attention.centroid_side == "key":
            key_assign = head.extras["centroids"]
        _, ko = self._kernel(
            q, k, v, mask, s, side, weights=True, output=False, need_kl=False,
            query_mask=mask[:, rows:], key_assign=key_assign,
        )  # fmt: skip
        trace["attn"] = torch.cat([trace["attn"], ko.attn], dim=2)  # [N, H, L, L]
        for name in ("posterior_mean", "centroids", "attn_before_em"):
            if name == "centroids" and key_assign is not None:
                continue  # per key: the head rows' assignment is the whole map
            if name in ko.extras:
                trace[name] = torch.cat([trace[name], ko.extras[name]], dim=2)


class EncoderLayer(nn.Module):
    """Pre-LN block: ``x + Attn(LN(x))`` then ``x + FFN(LN(x))``."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg
        self.norm1 = nn.LayerNorm(cfg.d_model)
        self.attn = MultiHeadAttention(cfg)
        self.norm2 = nn.LayerNorm(cfg.d_model)
        self.ff1 = nn.Linear(cfg.d_model, cfg.d_ff)
        self.ff2 = nn.Linear(cfg.d_ff, cfg.d_model)

    def forward(
        self,
        x: torch.Tensor,  # [N, L, D]
        mask: torch.Tensor,  # [N, L]
        s: ForwardSettings,
        noise: SampleNoise | None,
        capture: bool = False,
        cls_only: bool = False,
        repeats: int = 1,
    ):
        """``x [N, L, D]`` -> ``(x [N, L, D] or [N, 1, D] if cls_only, trace, kl [N] or None)``.

        ``cls_only`` (the last layer): attention over all tokens as usual, then the residual and
        FFN for the [CLS] row only, which is all the classifier reads. The path does not depend
        on ``capture``, so capturing never changes the numbers. ``repeats > 1``: ``x`` holds the
        unique rows and the output ``repeats`` sample-major copies (the attention input is
        deterministic, so its projections are computed once per unique row).
        """
        bayes = self.cfg.family == "bayesformer"
        p = s.dropout if s.dropout_on else 0.0
        rows = 1 if cls_only else None
        y, trace, kl = self.attn(self.norm1(x), mask, s, noise, capture, rows, repeats)
        x = x.repeat(repeats, 1, 1) if repeats > 1 else x
        x = x if rows is None else x[:, :rows]
        x = x + y if bayes else add_dropout(x, y, p, noise)
        h = self.norm2(x)
        if bayes:
            h = dropout(h, p, noise, shared_dims=(1,))  # one FFN-input mask per sequence
        h = linear(linear(h, self.ff1, relu=True), self.ff2)  # [N, L, D]
        x = x + h if bayes else add_dropout(x, h, p, noise)
        return x, trace, kl
