"""The backbone table: the encoder a family's attention runs in, one entry each.

A family (:mod:`uqcore.families`) says what attention does; a backbone says what surrounds it:
the word-level encoder trained from scratch (pre-LN, learned positions, the library's own
vocabulary) or a BERT-family encoder whose base weights come from a local Hugging Face folder
(post-LN, GELU, token-type embeddings, WordPiece): BERT, RoBERTa and DistilBERT are three
entries of that kind, told apart by their params and their Hugging Face layout. Any family runs
in any backbone. Adding a backbone = one module with its classifier (or a layout) + one entry.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

from torch import nn

from uqcore.errors import ConfigError
from uqcore.hf_layouts import BERT, DISTILBERT, ROBERTA, HFLayout


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


def _build_word(cfg) -> nn.Module:
    from uqcore.model import EncoderClassifier  # late: model imports config, config this table

    return EncoderClassifier(cfg)


def _build_bert(cfg) -> nn.Module:
    from uqcore.bert import BertClassifier

    return BertClassifier(cfg)


def _no_base(cfg) -> frozenset[str]:
    return frozenset()


def _bert_frozen(cfg) -> frozenset[str]:
    from uqcore.bert import frozen_base_names

    return frozen_base_names(cfg)


def _attach_bert(model: nn.Module, folder) -> None:
    from uqcore.bert import load_hf_bert

    for member in getattr(model, "members", [model]):  # a deep ensemble: every member
        load_hf_bert(member, folder, share_tables=True)  # one copy of the embedding tables


@dataclass(frozen=True)
class BackboneSpec:
    """One backbone: ``params`` (its structure dataclass, ``ModelConfig.backbone_params``) and
    ``build(cfg)`` (a fresh classifier of one member; :func:`uqcore.model.build_model` wraps
    ensembles and adapters around it). A pretrained backbone (``pretrained``) also names the
    tensors its base provides (``frozen(cfg)``: a checkpoint does not store them) and copies
    them into a model (``attach(model, folder)``); its input is the base folder's WordPiece
    tokenizer instead of a ``vocab.json``; ``hf``: the Hugging Face layout of its folders
    (:mod:`uqcore.hf_layouts`: config keys, tensor names, tokenizer specials)."""

    name: str
    title: str
    params: type
    build: Callable[[object], nn.Module]
    pretrained: bool = False
    frozen: Callable[[object], frozenset[str]] = _no_base
    attach: Callable[[nn.Module, object], None] | None = None
    hf: HFLayout | None = None


BACKBONES: dict[str, BackboneSpec] = {
    spec.name: spec
    for spec in (
        BackboneSpec("word", "Word-level, trained from scratch", WordParams, _build_word),
        BackboneSpec("bert", "BERT-family pretrained encoder", BertParams, _build_bert,
                     pretrained=True, frozen=_bert_frozen, attach=_attach_bert, hf=BERT),
        BackboneSpec("roberta", "RoBERTa pretrained encoder", RobertaParams, _build_bert,
                     pretrained=True, frozen=_bert_frozen, attach=_attach_bert, hf=ROBERTA),
        BackboneSpec("distilbert", "DistilBERT pretrained encoder", DistilBertParams,
                     _build_bert, pretrained=True, frozen=_bert_frozen, attach=_attach_bert,
                     hf=DISTILBERT),
    )
}


def get_backbone(name: str) -> BackboneSpec:
    """The spec of backbone ``name``; :class:`ConfigError` listing the known ones otherwise."""
    spec = BACKBONES.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ConfigError(f"Unknown backbone {name!r}. Use one of: {', '.join(BACKBONES)}.")
    return spec
