"""Export a checkpoint on a pretrained base as a Hugging Face classifier folder: ``python -m
uqlab.export_hf NAME OUT [--root DIR]``.

``OUT`` becomes a standard ``BertForSequenceClassification`` folder (a BERT-backbone checkpoint,
the ``*-minilm-*`` ones) or ``LlamaForSequenceClassification`` / ``Qwen2...`` / ``Mistral...`` /
``GPT2ForSequenceClassification`` folder (a decoder: the ``*-smollm2-*`` ones, an imported
decoder; :mod:`uqlab.models.export_decoder`) that ``transformers`` loads (``config.json`` with
``id2label``, ``model.safetensors`` with the adapters merged into their weights, the base's
``tokenizer.json`` and tokenizer config): its deterministic logits are the checkpoint's.

What a stochastic family adds (H-STO's centroids, BAM's prior network, the family, its
structure, its trained knobs and which layers are stochastic) goes in two side files that
``transformers`` ignores and :mod:`uqlab.import_hf` reads back: ``uq_family.json`` and
``uq_family.safetensors``, with the length the checkpoint was trained to read at. So export ->
import gives the checkpoint's samples again, at the same reading length.
"""

from __future__ import annotations

import argparse
import dataclasses
import json
import shutil
import sys
from pathlib import Path

import torch
from safetensors.torch import save_file

from uqcore.backbones import get_backbone
from uqcore.checkpoint import Checkpoint
from uqcore.exceptions import UQError
from uqcore.nets.bert import hf_names
from uqcore.readers.base_model import locate
from uqcore.readers.hf_layouts import read_config_json
from uqcore.registry import load
from uqlab.catalog.paths import checkpoint_dir
from uqlab.import_hf import SIDE_JSON, SIDE_TENSORS
from uqlab.models.export_decoder import decoder_hf_config, decoder_split_tensors, split_state

TOKENIZER_FILES = (
    "tokenizer.json",
    "tokenizer_config.json",
    "special_tokens_map.json",
    "vocab.txt",
)


def hf_config(ck: Checkpoint) -> dict:
    """The ``BertConfig`` of the checkpoint's encoder, with its label names."""
    cfg, bp = ck.config, ck.config.backbone_params
    labels = ck.training.get("label_names") or [f"LABEL_{i}" for i in range(cfg.num_classes)]
    return {
        "architectures": ["BertForSequenceClassification"],
        "model_type": "bert",
        "vocab_size": cfg.vocab_size,
        "hidden_size": cfg.d_model,
        "num_hidden_layers": cfg.n_layers,
        "num_attention_heads": cfg.n_heads,
        "intermediate_size": cfg.d_ff,
        "hidden_act": "gelu",
        "hidden_dropout_prob": cfg.dropout,
        "attention_probs_dropout_prob": cfg.dropout,
        "max_position_embeddings": cfg.max_len,
        "type_vocab_size": bp.type_vocab_size,
        "layer_norm_eps": bp.layer_norm_eps,
        "position_embedding_type": "absolute",
        "pad_token_id": ck.vocab.pad_id,
        "initializer_range": 0.02,
        "id2label": {str(i): n for i, n in enumerate(labels)},
        "label2id": {n: i for i, n in enumerate(labels)},
    }


def split_tensors(ck: Checkpoint) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """The model's tensors as ``(Hugging Face tensors, the family's own tensors)``: Q, K, V
    split from our fused projection, the encoder under ``bert.``, the head as ``classifier``."""
    bp = dataclasses.replace(ck.config.backbone_params, head_from_base=True)
    names = hf_names(ck.config.replace(backbone_params=bp))

    def cut(key: str, value: torch.Tensor, theirs: tuple[str, ...]) -> list[torch.Tensor]:
        return list(value.chunk(len(theirs))) if len(theirs) > 1 else [value]

    return split_state(ck, names, "bert.", cut)


def export(name: str, out: str | Path, root: str | Path | None = None) -> Path:
    """Write checkpoint ``name`` (of ``root``, default the shipped folder) as a Hugging Face
    folder ``out`` (created; an existing folder must be empty). Returns ``out``."""
    ck = load(name, root if root is not None else checkpoint_dir())
    cfg = ck.config
    decoder = get_backbone(cfg.backbone).classifier == "decoder"
    if ck.base is None or not (decoder or cfg.backbone == "bert"):
        raise UQError(
            f"{name} is a {cfg.backbone!r} checkpoint; only checkpoints on a pretrained BERT "
            "(the *-minilm-* ones) or decoder (the *-smollm2-* ones) export as a Hugging Face "
            "classifier."
        )
    if cfg.spec.ensemble:
        raise UQError(
            f"{name} is a deep ensemble of {cfg.ensemble_size} models; a Hugging Face "
            "folder holds one. Export a single-model checkpoint."
        )
    out = Path(out)
    if out.exists() and any(out.iterdir()):
        raise UQError(f"{out} is not empty; give a new folder.")
    base = locate(ck.base, root=ck.path)
    labels = ck.training.get("label_names") or [f"LABEL_{i}" for i in range(cfg.num_classes)]
    if decoder:
        config = decoder_hf_config(ck, read_config_json(base), list(labels))
        hf, own = decoder_split_tensors(ck)
    else:
        config, (hf, own) = hf_config(ck), split_tensors(ck)
    out.mkdir(parents=True, exist_ok=True)
    save_file(hf, str(out / "model.safetensors"), metadata={"format": "pt"})
    (out / "config.json").write_text(json.dumps(config, indent=2))
    for fname in TOKENIZER_FILES:
        if (base / fname).is_file():
            shutil.copyfile(base / fname, out / fname)
    model = {k: v for k, v in cfg.to_dict().items() if k != "adapters"}
    side = {
        "model": model,
        "training": {
            "task": ck.training.get("task"),
            "label_names": ck.training.get("label_names"),
            "exported_from": name,
            "config": {"max_len": ck.read_len},  # the length it reads a text at, kept
        },
    }
    (out / SIDE_JSON).write_text(json.dumps(side, indent=2))
    if own:
        save_file(own, str(out / SIDE_TENSORS))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("name", help="a checkpoint on a pretrained base, e.g. cola-minilm-trans")
    p.add_argument("out", help="the folder to write (new or empty)")
    p.add_argument("--root", default=None, help="checkpoint folder (default: UQ_CHECKPOINT_DIR)")
    args = p.parse_args(argv)
    try:
        out = export(args.name, args.out, args.root)
    except UQError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    arch = json.loads((out / "config.json").read_text())["architectures"][0]
    print(f"{out}: {arch} of {args.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
