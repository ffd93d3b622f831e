"""The backbone table: the encoder a family's attention runs in, one entry each.

A family (:mod:`uqcore.families`) says what attention does; a backbone says what surrounds it:
the word-level encoder trained from scratch (pre-LN, learned positions, the library's own
vocabulary) or a BERT-family encoder whose base weights come from a local Hugging Face folder
(post-LN, GELU, token-type embeddings, WordPiece): BERT, RoBERTa and DistilBERT are three
entries of that kind, told apart by their params and their Hugging Face layout. Any family runs
in any backbone. This module is data only (no torch): the classes that build each kind of
classifier are named in :mod:`uqcore.build`. Adding a backbone = one entry here (with a layout
in :mod:`uqcore.hf_layouts`, or a new classifier kind: its module + one line in
:mod:`uqcore.build`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

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


@dataclass(frozen=True)
class BackboneSpec:
    """One backbone, as data: ``params`` (its structure dataclass, ``ModelConfig.backbone_params``)
    and ``classifier``, the kind of classifier a member of it is (``"word"``: the word-level
    encoder, ``"bert"``: the BERT-family one); :mod:`uqcore.build` maps each kind to the class
    that builds it and wraps ensembles and adapters around it. A pretrained backbone
    (``pretrained``) has a base that provides tensors a checkpoint does not store and its input
    is the base folder's WordPiece tokenizer instead of a ``vocab.json``
    (:func:`uqcore.build.frozen_names`, :func:`uqcore.build.attach_base`); ``hf``: the Hugging Face
    layout of its folders (:mod:`uqcore.hf_layouts`: config keys, tensor names, tokenizer
    specials)."""

    name: str
    title: str
    params: type
    classifier: Literal["word", "bert"] = "word"
    pretrained: bool = False
    hf: HFLayout | None = None


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
    )
}
# fmt: on


def get_backbone(name: str) -> BackboneSpec:
    """The spec of backbone ``name``; :class:`ConfigError` listing the known ones otherwise."""
    spec = BACKBONES.get(name) if isinstance(name, str) else None
    if spec is None:
        raise ConfigError(f"Unknown backbone {name!r}. Use one of: {', '.join(BACKBONES)}.")
    return spec
