"""A BERT-family encoder built from the library's own attention, so every family runs on it.

Post-LayerNorm blocks (``LN(x + Attn(x))`` then ``LN(x + FFN(x))``, FFN with exact GELU), word +
absolute position + token-type embeddings with a LayerNorm, and BERT's pooler (``tanh(W h_CLS)``)
before the classifier. The attention sub-layer is :class:`uqcore.layers.MultiHeadAttention`: the
family's kernel, the seeded noise streams, the batched T-sample call and map capture work as on
the word-level encoder. The forward contract is :class:`uqcore.model.EncoderClassifier`'s.

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
import json
import weakref
from pathlib import Path

import torch
import torch.nn.functional as F
from safetensors import safe_open
from torch import nn

from uqcore.backbones import BertParams
from uqcore.config import ModelConfig
from uqcore.errors import CheckpointError
from uqcore.layers import MultiHeadAttention, linear
from uqcore.maps import LayerMaps
from uqcore.model import StackedEncoder
from uqcore.noise import SampleNoise, add_dropout, dropout
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
        the same contract as :class:`uqcore.layers.EncoderLayer`."""
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
    """Embeddings + ``n_layers`` post-LN blocks + pooler + linear head on [CLS]."""

    def __init__(self, cfg: ModelConfig):
        super().__init__()
        self.cfg = cfg.validate()
        bp: BertParams = cfg.backbone_params
        d = cfg.d_model
        self.embed = nn.Embedding(cfg.vocab_size, d)
        self.pos = nn.Embedding(cfg.max_len, d)
        self.types = nn.Embedding(bp.type_vocab_size, d)
        self.embed_norm = nn.LayerNorm(d, eps=bp.layer_norm_eps)
        self.layers = nn.ModuleList(
            BertLayer(cfg, bp.layer_norm_eps, i) for i in range(cfg.n_layers)
        )
        self.pooler = nn.Linear(d, d)
        self.head = nn.Linear(d, cfg.num_classes)

    def _embed(self, ids, s: ForwardSettings, noise: SampleNoise | None) -> torch.Tensor:
        n, length = ids.shape
        tok = self.embed(ids)  # [N, L, D]
        pos = self.pos.weight[:length].expand(n, length, -1)  # [N, L, D]
        typ = self.types.weight[0].expand(n, length, -1)  # one segment: type 0 everywhere
        p = s.drop_p
        if self.cfg.spec.dropout_site == "variational":
            ones = tok.new_ones(n, length, 1)  # drop whole token / position inputs
            return self.embed_norm(tok * dropout(ones, p, noise) + pos * dropout(ones, p, noise)
                                   + typ)  # fmt: skip
        return dropout(self.embed_norm(tok + pos + typ), p, noise)

    def hidden_states(self, ids: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """Every token's last hidden state ``[N, L, D]``, deterministic (no noise, no dropout):
        what ``BertModel(...).last_hidden_state`` gives, for checking the port."""
        s = dataclasses.replace(resolve(self.cfg), dropout_on=False)
        x = self._embed(ids, s, None)
        for layer in self.layers:
            x, _, _ = layer(x, mask, s, None)
        return x

    def _logits(self, cls: torch.Tensor, s: ForwardSettings, noise) -> torch.Tensor:
        """BERT's pooler ``tanh(W h_CLS)``, dropout, the classifier: ``[N, D]`` -> ``[N, C]``."""
        p = s.drop_p
        return self.head(dropout(torch.tanh(self.pooler(cls)), p, noise))


# ------------------------------------------------------------------------- Hugging Face weights
def read_hf_config(folder: str | Path) -> dict:
    """The shape of a Hugging Face BERT folder's ``config.json`` as :class:`ModelConfig` fields
    (``backbone="bert"``); :class:`CheckpointError` if it is missing or not a BERT encoder."""
    path = Path(folder) / "config.json"
    try:
        hf = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"Cannot read the base model's config {path}: {exc}.") from None
    if hf.get("model_type") != "bert" or hf.get("hidden_act", "gelu") != "gelu":
        raise CheckpointError(
            f"{path} describes a {hf.get('model_type')!r} model with {hf.get('hidden_act')!r} "
            "activation; the bert backbone reads BERT encoders with GELU only."
        )
    if hf.get("position_embedding_type", "absolute") != "absolute":
        raise CheckpointError(f"{path}: only absolute position embeddings are supported.")
    return {
        "backbone": "bert",
        "vocab_size": hf["vocab_size"],
        "max_len": hf["max_position_embeddings"],
        "n_layers": hf["num_hidden_layers"],
        "n_heads": hf["num_attention_heads"],
        "d_model": hf["hidden_size"],
        "d_ff": hf["intermediate_size"],
        "dropout": hf.get("hidden_dropout_prob", 0.1),
        "backbone_params": {"type_vocab_size": hf.get("type_vocab_size", 2),
                            "layer_norm_eps": hf.get("layer_norm_eps", 1e-12)},
    }  # fmt: skip


def hf_names(n_layers: int) -> dict[str, tuple[str, ...]]:
    """Our tensor name -> the Hugging Face tensor(s) it is made of (Q, K, V are concatenated)."""
    names = {
        "embed.weight": ("embeddings.word_embeddings.weight",),
        "pos.weight": ("embeddings.position_embeddings.weight",),
        "types.weight": ("embeddings.token_type_embeddings.weight",),
        "embed_norm.weight": ("embeddings.LayerNorm.weight",),
        "embed_norm.bias": ("embeddings.LayerNorm.bias",),
        "pooler.weight": ("pooler.dense.weight",),
        "pooler.bias": ("pooler.dense.bias",),
    }
    for i in range(n_layers):
        hf = f"encoder.layer.{i}."
        ours = f"layers.{i}."
        for kind in ("weight", "bias"):
            names[ours + f"attn.qkv.{kind}"] = tuple(
                f"{hf}attention.self.{part}.{kind}" for part in ("query", "key", "value")
            )
            names[ours + f"attn.proj.{kind}"] = (f"{hf}attention.output.dense.{kind}",)
            names[ours + f"norm1.{kind}"] = (f"{hf}attention.output.LayerNorm.{kind}",)
            names[ours + f"ff1.{kind}"] = (f"{hf}intermediate.dense.{kind}",)
            names[ours + f"ff2.{kind}"] = (f"{hf}output.dense.{kind}",)
            names[ours + f"norm2.{kind}"] = (f"{hf}output.LayerNorm.{kind}",)
    return names


def hf_tensors(folder: str | Path, n_layers: int) -> dict[str, torch.Tensor]:
    """Our encoder's base tensors read from ``folder/model.safetensors`` (a ``BertModel``'s, with
    or without the ``bert.`` prefix); :class:`CheckpointError` naming what is missing."""
    path = Path(folder) / "model.safetensors"
    try:
        with safe_open(str(path), framework="pt") as f:
            keys = set(f.keys())
            prefix = "bert." if not keys & {"embeddings.word_embeddings.weight"} else ""
            out, missing = {}, []
            for ours, theirs in hf_names(n_layers).items():
                found = [prefix + t for t in theirs if prefix + t in keys]
                if len(found) < len(theirs):
                    missing += [prefix + t for t in theirs if prefix + t not in keys]
                    continue
                out[ours] = torch.cat([f.get_tensor(t).float() for t in found])
    except (OSError, ValueError) as exc:
        raise CheckpointError(f"Cannot read the base model's weights {path}: {exc}.") from None
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise CheckpointError(f"{path} lacks BERT tensor(s) {shown}; is it a BertModel?")
    return out


TRAINED_IN_BASE = ("norm", "pooler")  # LayerNorms and the pooler train with the adapters


def frozen_base_names(n_layers: int) -> frozenset[str]:
    """The tensor names whose values come from the base and never change in training: every
    base tensor but the LayerNorms. A checkpoint on this backbone stores all the others."""
    return frozenset(
        k for k in hf_names(n_layers) if not any(part in k for part in TRAINED_IN_BASE)
    )


SHARED_TABLES = ("embed.weight", "pos.weight", "types.weight")  # frozen, never merged into

# (base file, its size and mtime, tensor name) -> the table Parameter of the latest model loaded
# from it; weak, so the entry goes with that model (the app's cache evicts its oldest first).
_tables: weakref.WeakValueDictionary[tuple, nn.Parameter] = weakref.WeakValueDictionary()


def _share_tables(model: BertClassifier, folder: str | Path) -> None:
    """Point ``model``'s embedding tables at the storage of the tables an earlier model loaded
    from the same base file holds, if one is still alive. The MiniLM word table is 47 MB: an
    ensemble's members and the other MiniLM checkpoints in the app's cache then hold it once,
    not once each. Each model keeps its own Parameter objects (moving one model to another
    device or dtype gives it its own copy and leaves the others alone)."""
    path = (Path(folder) / "model.safetensors").resolve()
    stat = path.stat()
    own = dict(model.named_parameters())
    for name in SHARED_TABLES:
        param = own[name]
        key = (str(path), stat.st_size, stat.st_mtime_ns, name)
        donor = _tables.get(key)
        if donor is not None and donor.shape == param.shape and donor.dtype == param.dtype:
            param.data = donor.data  # [rows, d], read-only by contract: frozen, never merged
        _tables[key] = param


def load_hf_bert(
    model: BertClassifier, folder: str | Path, share_tables: bool = False
) -> BertClassifier:
    """Copy the base weights of ``folder`` into ``model`` (its family's own tensors, the head,
    stay as they are); shapes must match exactly. ``share_tables``: see the module docstring;
    only for models whose embedding tables nothing writes (inference, not training)."""
    tensors = hf_tensors(folder, model.cfg.n_layers)
    own = model.state_dict()
    wrong = [f"{k} {list(t.shape)} vs {list(own[k].shape)}" for k, t in tensors.items()
             if own[k].shape != t.shape]  # fmt: skip
    if wrong:
        raise CheckpointError(
            f"The base model in {folder} does not fit the config: {'; '.join(wrong[:3])}."
        )
    with torch.no_grad():
        for key, value in tensors.items():
            own[key].copy_(value)
    if share_tables:
        _share_tables(model, folder)
    return model
