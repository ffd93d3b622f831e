"""The backbone table: the encoder a family's attention runs in, one entry each.

A family (:mod:`uqcore.families`) says what attention does; a backbone says what surrounds it:
the word-level encoder trained from scratch (pre-LN, learned positions, the library's own
vocabulary) or a BERT-family encoder whose base weights come from a local Hugging Face folder
(post-LN, GELU, token-type embeddings, WordPiece): BERT, RoBERTa and DistilBERT are three
entries of that kind, told apart by their params and their Hugging Face layout; Llama, Qwen2,
Mistral and GPT-2 are entries of the causal ``"decoder"`` kind (:mod:`uqcore.nets.decoder`). Any
family runs in any backbone. This module is data only (no torch): the classes that build each
kind of classifier are named in :mod:`uqcore.build`. Adding a backbone = one entry here (with a
layout in :mod:`uqcore.readers.hf_layouts` or :mod:`uqcore.readers.hf_decoder_layouts`, or a new
classifier kind: its module + one line in :mod:`uqcore.build`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from uqcore.exceptions import ConfigError
from uqcore.readers.hf_decoder_layouts import GPT2, LLAMA, MISTRAL, QWEN2, DecoderLayout
from uqcore.readers.hf_layouts import BERT, DISTILBERT, ROBERTA, HFLayout


@dataclass(frozen=True)
class WordParams:
    """The word-level encoder has no fields beyond :class:`uqcore.config.ModelConfig`'s."""


@dataclass(frozen=True)
class BertParams:
    """What a BERT encoder has beyond the shape fields of ``ModelConfig``. ``head_from_base``:
    the classifier (dense + output layer) and the LayerNorms come from the base folder too (an
    imported Hugging Face classifier); False: the base is an encoder and training made them.
    Class constants (not stored): the head's activation, and whether dropout also comes before
    its dense layer (RoBERTa)."""

    type_vocab_size: int = 2
    layer_norm_eps: float = 1e-12
    head_from_base: bool = False
    position_offset: ClassVar[int] = 0
    head_activation: ClassVar[str] = "tanh"
    drop_before_dense: ClassVar[bool] = False


@dataclass(frozen=True)
class RobertaParams:
    """RoBERTa: positions start at ``position_offset`` (its padding id + 1)."""

    type_vocab_size: int = 1
    layer_norm_eps: float = 1e-5
    position_offset: int = 2
    head_from_base: bool = True
    head_activation: ClassVar[str] = "tanh"
    drop_before_dense: ClassVar[bool] = True


@dataclass(frozen=True)
class DistilBertParams:
    """DistilBERT: no token types, LayerNorm eps 1e-12, a ReLU head."""

    layer_norm_eps: float = 1e-12
    head_from_base: bool = True
    type_vocab_size: ClassVar[int] = 0
    position_offset: ClassVar[int] = 0
    head_activation: ClassVar[str] = "relu"
    drop_before_dense: ClassVar[bool] = False


@dataclass(frozen=True)
class LlamaParams:
    """A Llama-family decoder (Llama, SmolLM, Qwen2, Mistral): RMSNorm (``norm_eps``), rotary
    positions (``rope_theta``), grouped-query attention (``n_kv_heads`` key / value heads, a
    divisor of ``n_heads``), a SwiGLU MLP; which projections have biases (Qwen2: Q, K, V).
    ``head_from_base``: the ``score`` layer comes from the base folder (an imported
    classifier). ``pool_skip_id``: the token the head reads is the rightmost real one whose id
    is not this (an imported classifier: its config's ``pad_token_id``, as transformers'
    ``*ForSequenceClassification`` pools, even where the template appends that id to every
    text); None: the last real token (the classifiers trained here). Class constants (not
    stored): what differs from GPT-2."""

    n_kv_heads: int = 8
    norm_eps: float = 1e-6
    rope_theta: float = 10000.0
    qkv_bias: bool = False
    out_bias: bool = False
    mlp_bias: bool = False
    head_from_base: bool = True
    pool_skip_id: int | None = None
    norm: ClassVar[str] = "rms"
    mlp: ClassVar[str] = "swiglu"
    positions: ClassVar[str] = "rotary"


@dataclass(frozen=True)
class Qwen2Params(LlamaParams):
    """Qwen2: a Llama-family decoder with biases on Q, K and V."""

    qkv_bias: bool = True


@dataclass(frozen=True)
class Gpt2Params:
    """GPT-2: LayerNorm (``norm_eps``), learned absolute positions, one key / value head per
    query head, GELU (tanh approximation) MLP, biases everywhere but the ``score`` layer;
    ``pool_skip_id`` as :class:`LlamaParams`'."""

    norm_eps: float = 1e-5
    head_from_base: bool = True
    pool_skip_id: int | None = None
    n_kv_heads: ClassVar[None] = None  # = n_heads
    rope_theta: ClassVar[None] = None
    qkv_bias: ClassVar[bool] = True
    out_bias: ClassVar[bool] = True
    mlp_bias: ClassVar[bool] = True
    norm: ClassVar[str] = "layer"
    mlp: ClassVar[str] = "gelu_tanh"
    positions: ClassVar[str] = "learned"


@dataclass(frozen=True)
class BackboneSpec:
    """One backbone, as data: ``params`` (its structure dataclass, ``ModelConfig.backbone_params``)
    and ``classifier``, the kind of classifier a member of it is (``"word"``: the word-level
    encoder, ``"bert"``: the BERT-family one, ``"decoder"``: a causal decoder of the Llama
    family or GPT-2, :mod:`uqcore.nets.decoder`); :mod:`uqcore.build` maps each kind to the class
    that builds it and wraps ensembles and adapters around it. A pretrained backbone
    (``pretrained``) has a base that provides tensors a checkpoint does not store and its input
    is the base folder's WordPiece tokenizer instead of a ``vocab.json``
    (:func:`uqcore.build.frozen_names`, :func:`uqcore.build.attach_base`); ``hf``: the Hugging Face
    layout of its folders (:mod:`uqcore.readers.hf_layouts`: config keys, tensor names, tokenizer
    specials)."""

    name: str
    title: str
    params: type
    classifier: Literal["word", "bert", "decoder"] = "word"
    pretrained: bool = False
    hf: HFLayout | DecoderLayout | None = None


# Hand-laid (fmt: off): one backbone per entry, read as a table.
# fmt: off
BACKBONES: dict[str, BackboneSpec] = {
    spec.name: spec
    for spec in (
        BackboneSpec("word", "Word-level, trained from scratch", WordParams),
        BackboneSpec("bert", "BERT-family pretrained encoder", BertParams, "bert",
                     pretrained=True, hf=BERT),
        BackboneSpec("roberta", "RoBERTa pretrained encoder", RobertaParams, "bert",
                     pretrained=True, hf=ROBERTA),
        BackboneSpec("distilbert", "DistilBERT pretrained encoder", DistilBertParams, "bert",
                     pretrained=True, hf=DISTILBERT),
        BackboneSpec("llama", "Llama-family pretrained decoder", LlamaParams, "decoder",
                     pretrained=True, hf=LLAMA),
        BackboneSpec("qwen2", "Qwen2 pretrained decoder", Qwen2Params, "decoder",
                     pretrained=True, hf=QWEN2),
        BackboneSpec("mistral", "Mistral pretrained decoder", LlamaParams, "decoder",
                     pretrained=True, hf=MISTRAL),
        BackboneSpec("gpt2", "GPT-2 pretrained decoder", Gpt2Params, "decoder",
                     pretrained=True, hf=GPT2),
    )
}
# fmt: on


def get_backbone(name: str) -> BackboneSpec:
    """The spec of backbone ``name``; :class:`ConfigError` listing the known ones otherwise."""
    spec = BACKBONES.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ConfigError(f"Unknown backbone {name!r}. Use one of: {', '.join(BACKBONES)}.")
    return spec
