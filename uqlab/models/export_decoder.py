"""A decoder checkpoint (the Llama family, GPT-2) as a Hugging Face ``*ForSequenceClassification``
folder's config and tensors; :mod:`uqlab.export_hf` writes them with the side files.

The config is the base folder's own ``config.json`` (every field the decoder was read from kept
as it was: RoPE, norms, vocabulary) with the classifier's architecture, labels and padding id,
checked to read back as the checkpoint's shape (:func:`decoder_hf_config`). The tensors are the
model's, adapters merged, in the layout :mod:`uqcore.readers.hf_decoder_layouts` reads: our fused Q,
K, V projection split into ``q_proj`` ``[H*dh, D]``, ``k_proj`` and ``v_proj`` ``[KV*dh, D]``
(grouped heads: K and V are narrower), GPT-2's Conv1D weights transposed back to ``[in, out]``, the
head as ``score``; what a family adds (H-STO's centroids, BAM's prior) is returned apart, for the
side file (:func:`decoder_split_tensors`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

import torch

from uqcore.backbones import get_backbone
from uqcore.checkpoint import Checkpoint
from uqcore.exceptions import UQError
from uqcore.readers.decoder_weights import hf_decoder_names
from uqcore.readers.hf_decoder_layouts import decoder_layout_of

# the keys of a base's config.json that describe a causal LM, not a classifier
_LM_ONLY = ("tie_word_embeddings", "problem_type")


def decoder_hf_config(ck: Checkpoint, base: dict, labels: list[str]) -> dict:
    """The ``config.json`` of the exported classifier: ``base`` (the base folder's config) with
    ``architectures``, ``id2label`` / ``label2id``, ``num_labels`` and ``pad_token_id`` set.
    :class:`UQError` when it would not read back as the checkpoint's shape."""
    cfg = ck.config
    layout = decoder_layout_of(base)
    out = {k: v for k, v in base.items() if k not in _LM_ONLY}
    out |= {
        "architectures": [layout.architecture],
        "id2label": {str(i): n for i, n in enumerate(labels)},
        "label2id": {n: i for i, n in enumerate(labels)},
        "num_labels": len(labels),
        "pad_token_id": classifier_pad_id(ck),
    }
    fields = layout.fields(out)
    want = {k: getattr(cfg, k) for k in ("vocab_size", "n_layers", "n_heads", "d_model", "d_ff")}
    got = {k: fields[k] for k in want}
    if got != want:
        raise UQError(
            f"The base's config.json describes {got}, the checkpoint {want}: the base is not the "
            "one this checkpoint was built on; reinstall it (python -m uqlab.bases install)."
        )
    return out


def classifier_pad_id(ck: Checkpoint) -> int:
    """The ``pad_token_id`` of the exported classifier. A ``*ForSequenceClassification`` reads
    the last token that is not this id, so it must not be one the template puts around a text:
    the SmolLM2 base pads with ``<|im_end|>``, which closes every text, and would be read one
    token early. Then the first special token outside the template (``<|endoftext|>``) pads.
    An imported classifier reads as transformers does already (``pool_skip_id``): that id."""
    skip = getattr(ck.config.backbone_params, "pool_skip_id", None)
    if skip is not None:
        return skip
    before, _, after, _ = ck.vocab.template()
    held = set(before) | set(after)
    if ck.vocab.pad_id not in held:
        return ck.vocab.pad_id
    spare = [i for i in ck.vocab.special_ids() if i not in held]
    if not spare:
        raise UQError(
            "The tokenizer pads with a token its template puts around every text and has no "
            "other special token: a Hugging Face classifier would read the wrong token."
        )
    return spare[0]


def _parts(ours: str, value: torch.Tensor, theirs: tuple[str, ...], ck: Checkpoint) -> list:
    """``value`` cut into the Hugging Face tensors ``theirs`` it was concatenated from."""
    if len(theirs) == 1:
        return [value]
    cfg = ck.config
    kv = cfg.backbone_params.n_kv_heads or cfg.n_heads
    sizes = [cfg.n_heads * cfg.d_head, kv * cfg.d_head, kv * cfg.d_head]  # q, k, v rows
    if len(theirs) != 3 or sum(sizes) != value.shape[0]:
        raise UQError(f"{ours} {tuple(value.shape)} does not split into {', '.join(theirs)}.")
    return list(value.split(sizes))


def decoder_split_tensors(
    ck: Checkpoint,
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """``(Hugging Face tensors, the family's own tensors)`` of a decoder checkpoint, float32,
    under the classifier's prefix (``model.`` / ``transformer.``), the head as ``score.weight``."""
    bp = dataclasses.replace(ck.config.backbone_params, head_from_base=True)
    layout = get_backbone(ck.config.backbone).hf

    def cut(key: str, value: torch.Tensor, theirs: tuple[str, ...]) -> list[torch.Tensor]:
        parts = _parts(key, value, theirs, ck)
        return [p.t() for p in parts] if layout.transposed(key) else parts

    names = hf_decoder_names(ck.config.replace(backbone_params=bp))
    return split_state(ck, names, layout.prefix, cut)


def split_state(
    ck: Checkpoint,
    names: dict[str, tuple[str, ...]],
    prefix: str,
    cut: Callable[[str, torch.Tensor, tuple[str, ...]], list[torch.Tensor]],
) -> tuple[dict[str, torch.Tensor], dict[str, torch.Tensor]]:
    """The model's float32 tensors as ``(Hugging Face tensors, the family's own tensors)``:
    each tensor ``names`` maps (ours -> theirs, relative to ``prefix`` unless marked absolute by
    a leading ``/``) is ``cut`` into its Hugging Face parts; the others are the family's own.
    Shared by the decoder export and the BERT one (:func:`uqlab.export_hf.split_tensors`)."""
    state = {k: v.detach().float().contiguous() for k, v in ck.model.state_dict().items()}
    hf, own = {}, {}
    for key, value in state.items():
        theirs = names.get(key)
        if theirs is None:
            own[key] = value
            continue
        full = [t[1:] if t.startswith("/") else prefix + t for t in theirs]
        for name, part in zip(full, cut(key, value, theirs), strict=True):
            hf[name] = part.clone().contiguous()
    return hf, own
