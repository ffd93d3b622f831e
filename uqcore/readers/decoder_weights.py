"""Hugging Face decoder classifier folders read into :class:`uqcore.nets.decoder.DecoderClassifier`.

:func:`read_hf_decoder_config` turns a folder's ``config.json`` into a :class:`ModelConfig` (the
backbone by its ``model_type``, :mod:`uqcore.readers.hf_decoder_layouts`), as ``family`` in its
training-free form (``FamilySpec.untrained``: the structure and knob values for which zero
noise is the model itself, as :mod:`uqlab.import_hf` imports encoders).
:func:`hf_decoder_tensors` reads ``model.safetensors`` strictly: safetensors only, every
expected tensor present, finite and of its shape, nothing unexpected (a file with other
tensors is another model). :func:`load_hf_decoder` copies them into a model; GPT-2's Conv1D
weights ``[in, out]`` are transposed, Llama's Q, K, V concatenated into one projection.
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from pathlib import Path

import torch
from safetensors import safe_open
from torch import nn

from uqcore.backbones import get_backbone
from uqcore.config import ModelConfig
from uqcore.exceptions import CheckpointError, ConfigError
from uqcore.families import TRAINING_FREE, get_family
from uqcore.readers.base_model import share_base
from uqcore.readers.hf_decoder_layouts import DecoderLayout, decoder_layout_of
from uqcore.readers.hf_fields import HFFields
from uqcore.readers.hf_layouts import read_config_json


def read_decoder_shape(folder: str | Path) -> dict:
    """The shape of a decoder folder's ``config.json`` as :class:`ModelConfig` fields, as a
    base to train on (``head_from_base`` False: training makes the head); the backbone by its
    ``model_type``. :class:`CheckpointError` for a config the decoder does not compute."""
    hf = read_config_json(folder)
    layout = decoder_layout_of(hf)
    fields = layout.fields(hf)
    fields["backbone_params"] = {**fields.get("backbone_params", {}), "head_from_base": False}
    return {"backbone": layout.backbone, **fields}


def read_hf_decoder_config(folder: str | Path, family: str = "trans") -> ModelConfig:
    """The :class:`ModelConfig` of the decoder classifier in ``folder`` as ``family`` (one of
    :data:`uqcore.families.TRAINING_FREE`), every tensor, head included, from the folder.
    :class:`CheckpointError` for a config the decoder does not compute."""
    hf = read_config_json(folder)
    layout = decoder_layout_of(hf)
    fields = layout.fields(hf)
    c = HFFields(hf)  # the typed reader of every field
    labels = c.section("id2label")
    classes = c.optional_integer("num_labels", low=2) or (len(labels.doc) if labels else 2)
    if family not in TRAINING_FREE:
        raise ConfigError(
            f"family must be one of {', '.join(TRAINING_FREE)} (no training needed); "
            f"got {family!r}."
        )
    params, inference = get_family(family).untrained(fields["d_model"] // fields["n_heads"])
    cfg = ModelConfig.from_dict(
        {**fields, "backbone": layout.backbone, "num_classes": classes, "family": family}
    )
    return cfg.replace(attention=params, inference=inference)


def decoder_specials(folder: str | Path) -> tuple[int, int | None, int | None, None]:
    """``(pad, first, last, unknown)`` ids of a decoder folder's input, from its config.json:
    ``pad_token_id`` (else the end-of-text id, else 0), ``bos_token_id`` and ``eos_token_id``
    (None when absent: GPT-2's template adds neither, Llama's only the first); a byte-level BPE
    has no unknown piece. Which of them the text is wrapped in is the folder's
    ``tokenizer.json`` template's business (:meth:`uqcore.text.wordpiece.WordPiece.template`): a
    converted base's opens and closes every text (:mod:`uqlab.models.gguf_base`)."""
    hf = read_config_json(folder)
    bos, eos, pad = (_special(hf, k) for k in ("bos_token_id", "eos_token_id", "pad_token_id"))
    return (pad if pad is not None else eos if eos is not None else 0), bos, eos, None


def decoder_pool_skip_id(folder: str | Path) -> int | None:
    """The id an imported classifier's head skips when it picks the token to read
    (``backbone_params.pool_skip_id``): its config.json's ``pad_token_id`` as it is, None when
    absent (transformers then reads the last token). Not :func:`decoder_specials`' pad, which
    falls back to the end-of-text id for the tokenizer's padding only."""
    return _special(read_config_json(folder), "pad_token_id")


def _special(hf: dict, key: str) -> int | None:
    """``hf[key]``, a token id or None (a list: its first, as Llama 3 lists several end ids);
    :class:`CheckpointError` in one line for anything else."""
    value = hf.get(key)
    if isinstance(value, list):  # Llama 3 lists several end ids
        value = value[0] if value else None
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise CheckpointError(f"config.json's {key} must be a non-negative integer.")
    return value


def _layout(cfg: ModelConfig) -> DecoderLayout:
    return get_backbone(cfg.backbone).hf


def hf_decoder_names(cfg: ModelConfig) -> dict[str, tuple[str, ...]]:
    """Our tensor name -> the Hugging Face tensor(s) it is made of (relative to the prefix; the
    head's absolute, marked by a leading ``/``)."""
    bp = cfg.backbone_params
    return _layout(cfg).names(cfg.n_layers, bp, bp.head_from_base)


def hf_decoder_tensors(folder: str | Path, cfg: ModelConfig) -> dict[str, torch.Tensor]:
    """Our model's base tensors from ``folder/model.safetensors`` (a classifier's, or a bare
    decoder's without the prefix), float32, in our layout (Conv1D weights transposed);
    :class:`CheckpointError` naming what is missing, unexpected or not finite."""
    return dict(each_decoder_tensor(folder, cfg))


def each_decoder_tensor(
    folder: str | Path, cfg: ModelConfig, skip: Collection[str] = ()
) -> Iterator[tuple[str, torch.Tensor]]:
    """:func:`hf_decoder_tensors` one tensor at a time (what a load copies and drops before it
    reads the next: the base is held once, not twice). The file's names are checked first (from
    its header: nothing is read when one is missing or unexpected), each tensor as it is read;
    the tensors ``skip`` names (ours, already held) are neither read nor yielded."""
    layout = _layout(cfg)
    path = Path(folder) / "model.safetensors"
    names = hf_decoder_names(cfg)
    first = layout.embeddings["embed.weight"][0]
    try:
        with safe_open(str(path), framework="pt") as f:
            keys = set(f.keys())
            prefix = "" if first in keys else layout.prefix
            full = {
                ours: [t[1:] if t.startswith("/") else prefix + t for t in theirs]
                for ours, theirs in names.items()
            }
            _check_names(path, layout, keys, full)
            for ours, theirs in full.items():
                if ours in skip:
                    continue
                parts = [f.get_tensor(t).float() for t in theirs]
                if layout.transposed(ours):
                    parts = [t.t() for t in parts]
                value = torch.cat(parts).contiguous() if len(parts) > 1 else parts[0].contiguous()
                if not bool(torch.isfinite(value).all()):
                    raise CheckpointError(
                        f"{path.name}: tensor {ours} holds NaN or infinite values; the model "
                        "cannot be used."
                    )
                yield ours, value
    except CheckpointError:
        raise
    except (OSError, ValueError, RuntimeError) as exc:
        raise CheckpointError(
            f"Cannot read the base model's weights {path.name}: {type(exc).__name__}: {exc}."
        ) from None
    except Exception as exc:  # safetensors raises its own types for malformed files
        raise CheckpointError(
            f"{path.name} is not a readable safetensors file ({type(exc).__name__})."
        ) from None


def _check_names(path: Path, layout: DecoderLayout, keys: set[str], full: dict) -> None:
    """Every tensor the layout names is in the file and the file holds no other."""
    missing = [t for theirs in full.values() for t in theirs if t not in keys]
    if missing:
        shown = ", ".join(missing[:5]) + (" ..." if len(missing) > 5 else "")
        raise CheckpointError(
            f"{path.name} lacks tensor(s) {shown}; is it a {layout.architecture} of this config?"
        )
    used = {t for theirs in full.values() for t in theirs}
    extra = sorted(k for k in keys - used if not k.endswith(layout.ignored))
    if extra:
        shown = ", ".join(extra[:5]) + (" ..." if len(extra) > 5 else "")
        raise CheckpointError(
            f"{path.name} holds tensor(s) the {layout.architecture} config does not: {shown}."
        )


def decoder_frozen_names(cfg: ModelConfig) -> frozenset[str]:
    """The tensor names whose values come from the base: every one of them when the base is a
    whole classifier (``head_from_base``), else all but the head (the norms stay the base's:
    a decoder trains through its adapters and head only, which keeps a checkpoint small)."""
    names = hf_decoder_names(cfg)
    if cfg.backbone_params.head_from_base:
        return frozenset(names)
    return frozenset(k for k in names if not k.startswith("head"))


def load_hf_decoder(model: nn.Module, folder: str | Path, share_tables: bool = False) -> nn.Module:
    """Copy the base weights of ``folder`` into ``model`` (a :class:`DecoderClassifier`); every
    shape must match exactly. ``share_tables`` (inference only): every base tensor shares its
    storage with the other models loaded from the same base file
    (:func:`uqcore.readers.base_model.share_base`): the checkpoints on SmolLM2 hold its 540 MB once,
    and a tensor already held is neither read from the file nor copied."""
    held = frozenset()
    if share_tables:  # before the state dict is taken: the model's own storage goes now
        held = share_base(model, folder, hf_decoder_names(model.cfg), offer=False)
    own = model.state_dict()
    names = list(held)
    with torch.no_grad():
        for key, value in each_decoder_tensor(folder, model.cfg, held):  # one at a time
            if own[key].shape != value.shape:
                raise CheckpointError(
                    f"The base model in {folder} does not fit the config: {key} "
                    f"{list(value.shape)} vs {list(own[key].shape)}."
                )
            own[key].copy_(value)
            names.append(key)
    if share_tables:
        share_base(model, folder, names)
    return model
