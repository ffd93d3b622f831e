"""How a Hugging Face classifier folder maps onto the library's BERT-family encoder.

One :class:`HFLayout` per architecture the library reads: BERT (and every model in BERT's
layout: MiniLM, TinyBERT...), RoBERTa and DistilBERT. A layout knows the folder's
``config.json`` keys (:meth:`HFLayout.model_fields` turns them into
:class:`uqcore.config.ModelConfig` fields), the tensor names of its ``model.safetensors``
(:meth:`HFLayout.names`: our name -> the Hugging Face name(s), Q, K, V concatenated), where the
encoder's tensors sit in a ``*ForSequenceClassification`` file (``prefix``) and the tokenizer's
special tokens. Each is the ``hf`` entry of one backbone of :data:`uqcore.backbones.BACKBONES`.

The encoders differ only in what surrounds the attention: RoBERTa's positions start after its
padding id and its head is ``out_proj(tanh(dense(x)))`` under the name ``classifier``;
DistilBERT has no token types, names every projection differently and its head is
``classifier(relu(pre_classifier(x)))``. In our modules the dense layer of every head is
``pooler`` and the output layer ``head``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from uqcore.exceptions import CheckpointError
from uqcore.readers.hf_fields import HFFields, shown
from uqcore.untrusted import read_json_file

CONFIG_BYTES = 1 << 20  # a config.json larger than this is refused unread


@dataclass(frozen=True)
class HFLayout:
    """One architecture: ``model_type`` / ``architecture`` as its config.json names them,
    ``prefix`` of the encoder's tensors in a classifier file, ``specials`` (pad, cls, sep, unk)
    of its tokenizer, ``fields(hf)`` -> ModelConfig fields, ``layer(i)`` -> our name suffix ->
    theirs for layer ``i``, ``embeddings`` and ``head`` likewise (``head`` names are absolute)."""

    backbone: str
    model_type: str
    architecture: str
    prefix: str
    specials: tuple[str, str, str, str]
    fields: Callable[[dict], dict[str, Any]]
    embeddings: dict[str, tuple[str, ...]]
    layer: Callable[[int], dict[str, tuple[str, ...]]]
    pooler: dict[str, tuple[str, ...]]  # relative to the prefix when in the encoder
    head: dict[str, str]  # absolute names in a classifier file
    pooler_in_head: bool = False  # RoBERTa / DistilBERT: the dense layer belongs to the head

    def names(self, n_layers: int, with_head: bool) -> dict[str, tuple[str, ...]]:
        """Our tensor name -> its Hugging Face name(s), relative to the encoder prefix except the
        head's (marked by a leading ``/``). ``with_head``: include the dense layer and the
        output layer of the classifier (an imported classifier) or only the encoder (a base)."""
        out = dict(self.embeddings)
        for i in range(n_layers):
            out |= {f"layers.{i}.{ours}": theirs for ours, theirs in self.layer(i).items()}
        if not self.pooler_in_head or with_head:
            mark = "/" if self.pooler_in_head else ""
            out |= {k: tuple(mark + t for t in v) for k, v in self.pooler.items()}
        if with_head:
            out |= {k: ("/" + v,) for k, v in self.head.items()}
        return out


def _layer(prefix: str, qkv: tuple[str, ...], parts: dict[str, str]):
    """Layer ``i``'s names: ``qkv`` (our fused projection from three) and ``parts`` (our name ->
    theirs), all under ``prefix.format(i)``."""

    def names(i: int) -> dict[str, tuple[str, ...]]:
        hf = prefix.format(i)
        out = {}
        for kind in ("weight", "bias"):
            out[f"attn.qkv.{kind}"] = tuple(f"{hf}{p}.{kind}" for p in qkv)
            out |= {f"{ours}.{kind}": (f"{hf}{theirs}.{kind}",) for ours, theirs in parts.items()}
        return out

    return names


_bert_layer = _layer(
    "encoder.layer.{}.",
    tuple(f"attention.self.{p}" for p in ("query", "key", "value")),
    {
        "attn.proj": "attention.output.dense",
        "norm1": "attention.output.LayerNorm",
        "ff1": "intermediate.dense",
        "ff2": "output.dense",
        "norm2": "output.LayerNorm",
    },
)
_distil_layer = _layer(
    "transformer.layer.{}.",
    tuple(f"attention.{p}_lin" for p in "qkv"),
    {
        "attn.proj": "attention.out_lin",
        "norm1": "sa_layer_norm",
        "ff1": "ffn.lin1",
        "ff2": "ffn.lin2",
        "norm2": "output_layer_norm",
    },
)


def _embeddings(types: bool) -> dict[str, tuple[str, ...]]:
    out = {
        "embed.weight": ("embeddings.word_embeddings.weight",),
        "pos.weight": ("embeddings.position_embeddings.weight",),
        "embed_norm.weight": ("embeddings.LayerNorm.weight",),
        "embed_norm.bias": ("embeddings.LayerNorm.bias",),
    }
    if types:
        out["types.weight"] = ("embeddings.token_type_embeddings.weight",)
    return out


def _gelu(c: HFFields, key: str) -> None:
    c.one_of(key, ("gelu",), 'the exact GELU of BERT ("gelu")')


_EPS = dict(low=0.0, high=0.1, low_open=True)  # a norm's epsilon: 1e-12 .. 1e-5 in practice
_RATE = dict(low=0.0, high=1.0, high_open=True)  # a dropout rate


def _bert_fields(hf: dict) -> dict[str, Any]:
    """ModelConfig fields of a BERT config, every field read by :class:`HFFields`."""
    c = HFFields(hf)
    _gelu(c, "hidden_act")
    c.one_of("position_embedding_type", ("absolute",), "absolute position embeddings")
    c.need(
        "vocab_size",
        "max_position_embeddings",
        "num_hidden_layers",
        "num_attention_heads",
        "hidden_size",
        "intermediate_size",
    )
    return {
        "vocab_size": c.integer("vocab_size"),
        "max_len": c.integer("max_position_embeddings", low=2),
        "n_layers": c.integer("num_hidden_layers"),
        "n_heads": c.integer("num_attention_heads"),
        "d_model": c.integer("hidden_size"),
        "d_ff": c.integer("intermediate_size"),
        "dropout": c.number("hidden_dropout_prob", **_RATE, default=0.1),
        "backbone_params": {
            "type_vocab_size": c.integer("type_vocab_size", default=2),
            "layer_norm_eps": c.number("layer_norm_eps", **_EPS, default=1e-12),
        },
    }


def _roberta_fields(hf: dict) -> dict[str, Any]:
    out = _bert_fields(hf)
    offset = HFFields(hf).integer("pad_token_id", low=0, default=1)  # positions start after it
    if out["max_len"] - offset - 1 < 2:
        raise CheckpointError(
            f"config.json's max_position_embeddings {out['max_len']} leaves no position after "
            f"pad_token_id {offset}: RoBERTa's positions start after the pad id; fix either."
        )
    out["max_len"] = out["max_len"] - offset - 1  # positions pad+1 ... of the table
    out["backbone_params"] |= {"position_offset": offset + 1}
    return out


def _distil_fields(hf: dict) -> dict[str, Any]:
    """ModelConfig fields of a DistilBERT config, every field read by :class:`HFFields`."""
    c = HFFields(hf)
    _gelu(c, "activation")
    c.need("vocab_size", "max_position_embeddings", "n_layers", "n_heads", "dim", "hidden_dim")
    return {
        "vocab_size": c.integer("vocab_size"),
        "max_len": c.integer("max_position_embeddings", low=2),
        "n_layers": c.integer("n_layers"),
        "n_heads": c.integer("n_heads"),
        "d_model": c.integer("dim"),
        "d_ff": c.integer("hidden_dim"),
        "dropout": c.number("dropout", **_RATE, default=0.1),
        "backbone_params": {},
    }


BERT = HFLayout(
    "bert",
    "bert",
    "BertForSequenceClassification",
    "bert.",
    ("[PAD]", "[CLS]", "[SEP]", "[UNK]"),
    _bert_fields,
    _embeddings(types=True),
    _bert_layer,
    pooler={"pooler.weight": ("pooler.dense.weight",), "pooler.bias": ("pooler.dense.bias",)},
    head={"head.weight": "classifier.weight", "head.bias": "classifier.bias"},
)
ROBERTA = HFLayout(
    "roberta",
    "roberta",
    "RobertaForSequenceClassification",
    "roberta.",
    ("<pad>", "<s>", "</s>", "<unk>"),
    _roberta_fields,
    _embeddings(types=True),
    _bert_layer,
    pooler={
        "pooler.weight": ("classifier.dense.weight",),
        "pooler.bias": ("classifier.dense.bias",),
    },
    head={"head.weight": "classifier.out_proj.weight", "head.bias": "classifier.out_proj.bias"},
    pooler_in_head=True,
)
DISTILBERT = HFLayout(
    "distilbert",
    "distilbert",
    "DistilBertForSequenceClassification",
    "distilbert.",
    ("[PAD]", "[CLS]", "[SEP]", "[UNK]"),
    _distil_fields,
    _embeddings(types=False),
    _distil_layer,
    pooler={"pooler.weight": ("pre_classifier.weight",), "pooler.bias": ("pre_classifier.bias",)},
    head={"head.weight": "classifier.weight", "head.bias": "classifier.bias"},
    pooler_in_head=True,
)
LAYOUTS: dict[str, HFLayout] = {x.model_type: x for x in (BERT, ROBERTA, DISTILBERT)}
ARCHITECTURES = tuple(x.architecture for x in LAYOUTS.values())


def read_config_json(folder: str | Path) -> dict:
    """``folder/config.json`` as a dict (at most :data:`CONFIG_BYTES`, no link followed, read
    within the bounds of :mod:`uqcore.untrusted`: its message when it cannot be read)."""
    path = Path(folder) / "config.json"
    if path.is_symlink():
        raise CheckpointError("config.json is a link; links are not followed: copy the file in.")
    try:
        hf = read_json_file(path, max_bytes=CONFIG_BYTES, error=CheckpointError)
    except FileNotFoundError:
        raise CheckpointError(
            "The folder has no config.json; save the model with save_pretrained."
        ) from None
    except OSError as exc:
        raise CheckpointError(
            f"config.json cannot be read ({type(exc).__name__}); save the "
            "model again with save_pretrained."
        ) from None
    if not isinstance(hf, dict):
        raise CheckpointError("config.json must hold a JSON object.")
    return hf


def layout_of(hf: dict) -> HFLayout:
    """The layout of a Hugging Face config (by ``model_type``); a message naming the supported
    architectures otherwise."""
    kind = hf.get("model_type")
    layout = LAYOUTS.get(kind) if isinstance(kind, str) else None
    if layout is None:
        raise CheckpointError(
            f"config.json describes a {shown(kind)} model; this app reads "
            f"{', '.join(ARCHITECTURES)} (and other models in BERT's layout, model_type 'bert')."
        )
    return layout
