"""A BERT-family encoder built from the library's own attention, so every family runs on it.

Post-LayerNorm blocks (``LN(x + Attn(x))`` then ``LN(x + FFN(x))``, FFN with exact GELU), word +
absolute position + token-type embeddings with a LayerNorm, and BERT's pooler (``tanh(W h_CLS)``)
before the classifier. The attention sub-layer is :class:`uqcore.nets.layers.MultiHeadAttention`:
the family's kernel, the seeded noise streams, the batched T-sample call and map capture work as on
the word-level encoder. The forward contract is :class:`uqcore.nets.model.EncoderClassifier`'s.

Dropout (when on, with a noise source): standard families drop the embeddings, attention
probabilities and both sub-layer outputs, as BERT does; BayesFormer drops the inputs of Q, K, V
per head, the FFN input and the token inputs, as on the word-level encoder.

:func:`load_hf_bert` copies a Hugging Face ``BertModel`` checkpoint (``model.safetensors`` of a
local folder) into it, strictly: every tensor of the encoder must be there with its shape.
With ``share_tables=True`` (how checkpoints load for inference) the embedding tables, which no
training or adapter ever changes, are one copy per process for every model on the same base file.
"""

from __future__ import annotations

import dataclasses
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors import safe_open
from torch import nn

from uqcore.backbones import get_backbone
from uqcore.config import ModelConfig
from uqcore.exceptions import CheckpointError
from uqcore.nets.layers import MultiHeadAttention
from uqcore.nets.linear import linear
from uqcore.nets.maps import LayerMaps
from uqcore.nets.model import StackedEncoder
from uqcore.nets.noise import SampleNoise, add_dropout, dropout
from uqcore.readers.base_model import copy_base, share_base
from uqcore.readers.hf_layouts import HFLayout, layout_of, read_config_json
from uqcore.settings import ForwardSettings, resolve


class BertLayer(nn.Module):
    """Post-LN block: ``LN(x + Attn(x))`` then ``LN(x + FFN(x))``."""

    def __init__(self, cfg: ModelConfig, eps: float, index: int = 0):
        super().__init__()
        self.attn = MultiHeadAttention(cfg, index)
        self.norm1 = nn.LayerNorm(cfg.d_model, eps=eps)
        self.ff1 = nn.Linear(cfg.d_model, cfg.d_ff)
        self.ff2 = nn.Linear(cfg.d_ff, cfg.d_model)
        self.norm2 = nn.LayerNorm(cfg.d_model, eps=eps)

    def attention_input(self, x: torch.Tensor) -> torch.Tensor:
        """What the attention sub-layer reads from the block's input: ``x`` itself (post-LN)."""
        return x

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
    ) -> tuple[torch.Tensor, LayerMaps, torch.Tensor | None]:
        """``x [N, L, D]`` -> ``(x [N, L, D] or [N, 1, D] if cls_only, maps, kl [N] or None)``;
        the same contract as :class:`uqcore.nets.layers.EncoderLayer`."""
        variational = self.attn.variational
        p = s.drop_p
        rows = 1 if cls_only else None
        y, maps, kl = self.attn(x, mask, s, noise, capture, rows, repeats, prepared)
        x = x.repeat(repeats, 1, 1) if repeats > 1 else x
        x = x if rows is None else x[:, :rows]
        x = self.norm1(x + y if variational else add_dropout(x, y, p, noise))
        h = dropout(x, p, noise, shared_dims=(1,)) if variational else x  # FFN-input mask
        h = linear(F.gelu(linear(h, self.ff1)), self.ff2)  # [N, L, D]
        x = self.norm2(x + h if variational else add_dropout(x, h, p, noise))
        return x, maps, kl


class BertClassifier(StackedEncoder):
    """Embeddings + ``n_layers`` post-LN blocks + a dense layer (``pooler``) + linear head on
    the first token. The backbone's params say what differs between BERT, RoBERTa and
    DistilBERT: token types (none when ``type_vocab_size`` is 0), where positions start
    (``position_offset``), the head's activation and its dropout sites."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg.validate()
        bp = cfg.backbone_params
        d = cfg.d_model
        self.offset = bp.position_offset
        self.embed = nn.Embedding(cfg.vocab_size, d)
        self.pos = nn.Embedding(cfg.max_len + self.offset, d)
        self.types = nn.Embedding(bp.type_vocab_size, d) if bp.type_vocab_size else None
        self.embed_norm = nn.LayerNorm(d, eps=bp.layer_norm_eps)
        self.layers = nn.ModuleList(
            BertLayer(cfg, bp.layer_norm_eps, i) for i in range(cfg.n_layers)
        )
        self.pooler = nn.Linear(d, d)
        self.head = nn.Linear(d, cfg.num_classes)
        self.head_act = torch.tanh if bp.head_activation == "tanh" else torch.relu
        self.drop_before_dense = bp.drop_before_dense

    def _embed(
        self, ids, s: ForwardSettings, noise: SampleNoise | None, tok: torch.Tensor | None = None
    ) -> torch.Tensor:
        n, length = ids.shape
        tok = self.embed(ids) if tok is None else tok  # [N, L, D]
        pos = self.pos.weight[self.offset : self.offset + length].expand(n, length, -1)
        p = s.drop_p
        if self.cfg.spec.dropout_site == "variational":
            ones = tok.new_ones(n, length, 1)  # drop whole token / position inputs
            x = tok * dropout(ones, p, noise) + pos * dropout(ones, p, noise)
        else:
            x = tok + pos  # [N, L, D]
        if self.types is not None:  # one segment: type 0 everywhere
            x = x + self.types.weight[0]
        x = self.embed_norm(x)
        return x if self.cfg.spec.dropout_site == "variational" else dropout(x, p, noise)

    def hidden_states(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Every token's last hidden state ``[N, L, D]``, deterministic (no noise, no dropout):
        what ``BertModel(...).last_hidden_state`` gives, for checking the port."""
        s = dataclasses.replace(resolve(self.cfg), dropout_on=False)
        x = self._embed(ids, s, None)
        for layer in self.layers:
            x, _, _ = layer(x, mask, s, None)
        return x

    def _logits(self, cls: torch.Tensor, s: ForwardSettings, noise) -> torch.Tensor:
        """The head on the first token: ``[N, D]`` -> ``[N, C]``. BERT: ``head(drop(tanh(
        pooler(x))))``; RoBERTa drops ``x`` first too; DistilBERT uses ReLU."""
        p = s.drop_p
        if self.drop_before_dense:
            cls = dropout(cls, p, noise)
        return self.head(dropout(self.head_act(self.pooler(cls)), p, noise))


# ------------------------------------------------------------------------- Hugging Face weights
def read_hf_config(folder: str | Path) -> dict:
    """The shape of a Hugging Face folder's ``config.json`` as :class:`ModelConfig` fields
    (``backbone`` by its ``model_type``: bert, roberta or distilbert); :class:`CheckpointError`
    if it is missing, too large or of another architecture."""
    hf = read_config_json(folder)
    layout = layout_of(hf)
    return {"backbone": layout.backbone, **layout.fields(hf)}


def _layout(cfg: ModelConfig) -> HFLayout:
    return get_backbone(cfg.backbone).hf


def hf_names(cfg: ModelConfig) -> dict[str, tuple[str, ...]]:
    """Our tensor name -> the Hugging Face tensor(s) it is made of (Q, K, V are concatenated);
    names relative to the encoder's prefix, a head's marked by a leading ``/``. The head is
    included when the base provides it (``backbone_params.head_from_base``)."""
    return _layout(cfg).names(cfg.n_layers, cfg.backbone_params.head_from_base)


def hf_tensors(folder: str | Path, cfg: ModelConfig) -> dict[str, torch.Tensor]:
    """Our model's base tensors read from ``folder/model.safetensors`` (an encoder's, with or
    without its classifier's prefix such as ``bert.``), as float32; :class:`CheckpointError`
    naming what is missing or not finite."""
    layout = _layout(cfg)
    path = Path(folder) / "model.safetensors"
    first = layout.embeddings["embed.weight"][0]
    try:
        with safe_open(str(path), framework="pt") as f:
            keys = set(f.keys())
            prefix = "" if first in keys else layout.prefix
            out, missing = {}, []
            for ours, theirs in hf_names(cfg).items():
                full = [t[1:] if t.startswith("/") else prefix + t for t in theirs]
                if any(t not in keys for t in full):
                    missing += [t for t in full if t not in keys]
                    continue
                out[ours] = torch.cat([f.get_tensor(t).float() for t in full])
    except (OSError, ValueError, RuntimeError) as exc:
        raise CheckpointError(
            f"Cannot read the base model's weights {path.name}: {type(exc).__name__}: {exc}."
        ) from None
    except Exception as exc:  # safetensors raises its own types for malformed files
        raise CheckpointError(
            f"{path.name} is not a readable safetensors file ({type(exc).__name__})."
        ) from None
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise CheckpointError(
            f"{path.name} lacks tensor(s) {shown}; is it a {layout.architecture} (or its encoder)?"
        )
    bad = [k for k, t in out.items() if not bool(torch.isfinite(t).all())]
    if bad:
        raise CheckpointError(
            f"{path.name}: tensor(s) {', '.join(bad[:3])} hold NaN or "
            "infinite values; the model cannot be used."
        )
    return out


TRAINED_IN_BASE = ("norm", "pooler", "head")  # trained with the adapters, unless from the base


def frozen_base_names(cfg: ModelConfig) -> frozenset[str]:
    """The tensor names whose values come from the base and never change: every base tensor
    but the LayerNorms and the head when the base is an encoder; every one of them when the
    base is a whole classifier. A checkpoint on this backbone stores all the others."""
    names = hf_names(cfg)
    if cfg.backbone_params.head_from_base:
        return frozenset(names)
    return frozenset(k for k in names if not any(part in k for part in TRAINED_IN_BASE))


SHARED_TABLES = ("embed.weight", "pos.weight", "types.weight")  # frozen, never merged into


def load_hf_bert(
    model: BertClassifier, folder: str | Path, share_tables: bool = False
) -> BertClassifier:
    """Copy the base weights of ``folder`` into ``model`` (its family's own tensors, the head,
    stay as they are); shapes must match exactly. ``share_tables``: see the module docstring;
    only for models whose embedding tables nothing writes (inference, not training)."""
    copy_base(model, hf_tensors(folder, model.cfg), folder)
    if share_tables:  # the MiniLM word table is 47 MB: held once by every model on the base
        share_base(model, folder, SHARED_TABLES)
    return model
