"""Prediction over many texts: pad token-id rows and draw T samples for each, in batches.

The training loop (dev metric), the float16 storage check and the evaluation all go through
:func:`predict_ids`, so a text gets the same probabilities wherever it is scored: rows are sampled
``rows`` at a time in order of length (little padding), and the output keeps the input order.
"""

from __future__ import annotations

from collections.abc import Sequence

import torch

from uqcore.model import PAD_ID
from uqcore.runtime import model_device
from uqcore.sampling import sample
from uqcore.vocab import Vocab


def pad(rows: Sequence[Sequence[int]], length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows of ids -> ``ids [n, length]`` (PAD-filled) and ``mask [n, length]`` (True = real)."""
    ids = torch.full((len(rows), length), PAD_ID, dtype=torch.long)
    mask = torch.zeros_like(ids, dtype=torch.bool)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = True
    return ids, mask


def predict_ids(
    model, encoded, T: int, seed: int, rows: int | None = None, bar=None, device=None,
    noise: str = "counter", settings=None, with_logits: bool = False,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:  # fmt: skip
    """Class probabilities ``[T, N, C]`` of token-id rows (each starting with [CLS]), sampled
    ``rows`` at a time in order of length (little padding); the output keeps the input order.
    ``device``: where to run (default: the model's); ``rows`` defaults to 64 on the CPU and 512
    on a GPU. With the default counter noise a row's samples do not depend on its batch.
    ``settings``: as :func:`uqcore.sampling.sample` takes them (None = the checkpoint's).
    ``with_logits``: also return the logits ``[T, N, C]``.
    ``bar``: anything with ``update(n)`` (a tqdm bar), told how many rows each batch finished."""
    device = model_device(model) if device is None else torch.device(device)
    rows = rows or (64 if device.type == "cpu" else 512)
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    out = torch.empty(T, len(encoded), model.cfg.num_classes)
    raw = torch.empty_like(out) if with_logits else None
    for start in range(0, len(order), rows):
        chunk = order[start : start + rows]
        ids, mask = pad([tuple(encoded[i]) for i in chunk], max(len(encoded[i]) for i in chunk))
        r = sample(model, ids.to(device), mask.to(device), T, seed, settings, noise=noise)
        out[:, chunk] = r.probs.cpu()
        if raw is not None:
            raw[:, chunk] = r.logits.cpu()
        if bar is not None:
            bar.update(len(chunk))
    return (out, raw) if with_logits else out


def predict(
    model, vocab: Vocab, texts, max_len: int, T: int, seed: int, rows: int | None = None,
    bar=None, with_logits: bool = False,
):  # fmt: skip
    """Class probabilities ``[T, N, C]`` of ``texts`` on the model's device, and their logits
    with ``with_logits`` (see :func:`predict_ids`)."""
    encoded = [vocab.encode(t, max_len, allow_all_unknown=True).ids for t in texts]
    return predict_ids(model, encoded, T, seed, rows, bar, with_logits=with_logits)


def features_ids(model, encoded, rows: int | None = None) -> torch.Tensor:
    """The last layer's [CLS] state ``[N, D]`` of token-id rows, from one pass without noise or
    dropout (a deep ensemble: the mean over its members), in length-sorted batches."""
    device = model_device(model)
    rows = rows or (64 if device.type == "cpu" else 512)
    members = list(model.members) if hasattr(model, "members") else [model]
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    out = torch.empty(len(encoded), model.cfg.d_model)
    with torch.inference_mode():
        for start in range(0, len(order), rows):
            chunk = order[start : start + rows]
            ids, mask = pad([tuple(encoded[i]) for i in chunk],
                            max(len(encoded[i]) for i in chunk))  # fmt: skip
            ids, mask = ids.to(device), mask.to(device)
            feats = torch.stack([m(ids, mask).features for m in members]).mean(0)  # [B, D]
            out[chunk] = feats.float().cpu()
    return out

