"""Prediction over many texts: pad token-id rows and draw T samples for each, in batches.

The training loop (dev metric), the float16 storage check and the evaluation all go through
:func:`predict_ids`, so a text gets the same probabilities wherever it is scored: rows are sampled
``rows`` at a time in order of length (little padding), and the output keeps the input order.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import torch

from uqcore.inference.grid import one_network, sample_grid
from uqcore.inference.sampling import SampleResult, sample
from uqcore.nets.model import PAD_ID
from uqcore.runtime import across_cores, model_device
from uqcore.text.vocab import Vocab


def pad(rows: Sequence[Sequence[int]], length: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows of ids -> ``ids [n, length]`` (PAD-filled) and ``mask [n, length]`` (True = real)."""
    ids = torch.full((len(rows), length), PAD_ID, dtype=torch.long)
    mask = torch.zeros_like(ids, dtype=torch.bool)
    for i, row in enumerate(rows):
        ids[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        mask[i, : len(row)] = True
    return ids, mask


def max_rows(device: torch.device, rows: int | None = None) -> int:
    """``rows``, or the most rows a batch takes by default: 64 on the CPU, 512 on a GPU."""
    return rows or (64 if device.type == "cpu" else 512)


def _padded(encoded, chunk: list[int], device) -> tuple[torch.Tensor, torch.Tensor]:
    """Rows ``chunk`` of ``encoded`` padded to their longest, on ``device``: ids and mask."""
    ids, mask = pad([tuple(encoded[i]) for i in chunk], max(len(encoded[i]) for i in chunk))
    return ids.to(device), mask.to(device)


CALL_COST = 100  # one sampling call's fixed cost, in padded token-samples (CPU, measured)
# a grid call's (uqcore.inference.grid): its values share the call's prefix, noise and chunks, so
# bigger batches pay (the temperature sweep of imdb-hsto on 2 cores: 0.17 s at 100, 0.12 s here)
GRID_CALL_COST = 10_000


def length_batches(
    lengths: Sequence[int],
    max_rows: int,
    T: int = 1,
    call_cost: int = CALL_COST,
) -> list[list[int]]:
    """Indices of ``lengths`` in batches of at most ``max_rows``, shortest first, chosen to
    minimise ``call_cost`` per batch plus the padded token-samples (``rows x longest x T``):
    a dynamic programme over the length-sorted rows, so a small set with a few long texts is not
    padded to their length, and a large set is not cut into needlessly small calls."""
    order = sorted(range(len(lengths)), key=lambda i: lengths[i])
    n = len(order)
    if n == 0:
        return []
    length = np.array([lengths[i] for i in order], dtype=np.float64)  # [n] ascending
    best = np.zeros(n + 1)  # best[j]: cost of the first j rows
    cut = np.zeros(n + 1, dtype=np.int64)  # where the last batch of the first j rows starts
    for j in range(1, n + 1):
        lo = max(0, j - max_rows)
        starts = np.arange(lo, j)  # [w] candidate first rows of the batch ending at j
        cost = best[lo:j] + call_cost + (j - starts) * length[j - 1] * T
        k = int(cost.argmin())
        best[j], cut[j] = cost[k], lo + k
    out, j = [], n
    while j > 0:
        out.append(order[cut[j] : j])
        j = int(cut[j])
    return out[::-1]


def predict_ids(
    model,
    encoded,
    T: int,
    seed: int,
    rows: int | None = None,
    bar=None,
    device=None,
    noise: str = "counter",
    settings=None,
    with_logits: bool = False,
    prefix_cache=None,
    prefix_owner=None,
    batches: list[list[int]] | None = None,
) -> torch.Tensor | tuple[torch.Tensor, torch.Tensor]:
    """Class probabilities ``[T, N, C]`` of token-id rows (each starting with [CLS]); the output
    keeps the input order. ``device``: where to run (default: the model's); ``rows``: the most
    rows per batch (default 64 on the CPU, 512 on a GPU). With the default counter noise a
    row's samples do not depend on its batch, so the batches are chosen for speed
    (:func:`length_batches`); the ``"stream"`` noise of training takes ``rows`` at a time in
    order of length, as it always has (its draws depend on the batch).
    ``settings``: as :func:`uqcore.inference.sampling.sample` takes them (None = the checkpoint's).
    ``with_logits``: also return the logits ``[T, N, C]``. ``prefix_cache`` / ``prefix_owner``:
    keep the layers below the first stochastic one across calls (:mod:`uqcore.inference.prefix`).
    ``bar``: anything with ``update(n)`` (a tqdm bar), told how many rows each batch finished.
    ``batches``: run only these batches of row indices (a part of :func:`batch_plan`, so that a
    process computes exactly what one process would: the rows of other batches stay unset)."""
    device = model_device(model) if device is None else torch.device(device)
    rows = max_rows(device, rows)
    if batches is None and noise == "counter":
        batches = length_batches([len(e) for e in encoded], rows, T)
    elif batches is None:
        order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
        batches = [order[start : start + rows] for start in range(0, len(order), rows)]
    out = torch.empty(T, len(encoded), model.cfg.num_classes)
    raw = torch.empty_like(out) if with_logits else None
    for chunk in batches:
        r = sample_rows(
            model,
            encoded,
            chunk,
            T,
            seed,
            device,
            settings,
            noise=noise,
            prefix_cache=prefix_cache,
            prefix_owner=prefix_owner,
        )
        out[:, chunk] = r.probs.cpu()
        if raw is not None:
            raw[:, chunk] = r.logits.cpu()
        if bar is not None:
            bar.update(len(chunk))
    return (out, raw) if with_logits else out


def sample_rows(
    model, encoded, chunk: list[int], T: int, seed: int, device=None, settings=None, **kwargs
) -> SampleResult:
    """The :class:`SampleResult` of rows ``chunk`` of ``encoded`` as one batch, padded to its
    longest, on ``device`` (default: the model's): what :func:`predict_ids` computes for that
    batch; ``kwargs`` go to :func:`uqcore.inference.sampling.sample` (``noise``, ``prefix_cache``,
    ``prefix_owner``, ``capture``): its ``features`` as
    :attr:`uqcore.inference.sampling.SampleResult.features` sets them."""
    device = model_device(model) if device is None else torch.device(device)
    ids, mask = _padded(encoded, chunk, device)
    return sample(model, ids, mask, T, seed, settings, **kwargs)


def predict_grid_ids(
    model,
    encoded,
    T: int,
    seed: int,
    grid,
    rows: int | None = None,
    bar=None,
    prefix_cache=None,
    prefix_owner=None,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Probabilities and logits ``[G, T, N, C]`` of token-id rows under each resolved setting of
    ``grid`` (counter noise): what :func:`predict_ids` gives per setting, with each batch's grid
    sampled together (:func:`uqcore.inference.grid.sample_grid`: one pass and one draw of the
    noise for a temperature grid). Batches are chosen as :func:`length_batches` chooses them for
    ``G * T`` samples a row. ``bar``: told ``update(n)`` with each batch's rows."""
    device = model_device(model)
    rows = max_rows(device, rows)
    grid = list(grid)
    batches = length_batches([len(e) for e in encoded], rows, T * len(grid), GRID_CALL_COST)
    shape = (len(grid), T, len(encoded), model.cfg.num_classes)
    probs, logits = torch.empty(shape), torch.empty(shape)  # [G, T, N, C]

    def one(chunk: list[int]) -> list:
        """One batch on a core of its own: its chunks of samples each within the per-chunk
        budget (:func:`uqcore.runtime.memory_budget`), so one chunk per core is in flight (half
        the budget each cut the long reviews' chunks to one sample: slower,
        docs/performance.md)."""
        ids, mask = _padded(encoded, chunk, device)
        kw = {"prefix_cache": prefix_cache, "prefix_owner": prefix_owner}
        return sample_grid(model, ids, mask, T, seed, grid, **kw)

    def cost(chunk: list[int]) -> int:  # padded token-samples, as length_batches counts them
        return len(chunk) * max(len(encoded[i]) for i in chunk)

    split = across_cores(one, batches, device, cost) if one_network(model) else map(one, batches)
    for chunk, got in zip(batches, split, strict=True):
        for g, r in enumerate(got):
            probs[g][:, chunk] = r.probs.cpu()
            logits[g][:, chunk] = r.logits.cpu()
        if bar is not None:
            bar.update(len(chunk))
    return probs, logits


def batch_plan(model, encoded, T: int, rows: int | None = None, device=None) -> list[list[int]]:
    """The batches :func:`predict_ids` runs (counter noise) for these rows, so several processes
    can share them out and compute each batch as one process would."""
    device = model_device(model) if device is None else torch.device(device)
    return length_batches([len(e) for e in encoded], max_rows(device, rows), T)


def predict(
    model,
    vocab: Vocab,
    texts,
    max_len: int,
    T: int,
    seed: int,
    rows: int | None = None,
    bar=None,
    with_logits: bool = False,
):
    """Class probabilities ``[T, N, C]`` of ``texts`` on the model's device, and their logits
    with ``with_logits`` (see :func:`predict_ids`)."""
    encoded = [vocab.encode(t, max_len, allow_all_unknown=True).ids for t in texts]
    return predict_ids(model, encoded, T, seed, rows, bar, with_logits=with_logits)


def feature_batches(model, encoded, rows: int | None = None) -> list[list[int]]:
    """The length-sorted batches :func:`features_ids` runs."""
    rows = max_rows(model_device(model), rows)
    order = sorted(range(len(encoded)), key=lambda i: len(encoded[i]))
    return [order[start : start + rows] for start in range(0, len(order), rows)]


def features_ids(
    model,
    encoded,
    rows: int | None = None,
    batches: list[list[int]] | None = None,
    bar=None,
) -> torch.Tensor:
    """The last layer's [CLS] state ``[N, D]`` of token-id rows, from one pass without noise or
    dropout (a deep ensemble: the mean over its members), in length-sorted batches
    (:func:`feature_batches`; ``batches``: only these, the other rows stay unset). ``bar``: a
    progress bar advanced by each batch's rows (``update(n)``, as tqdm's)."""
    device = model_device(model)
    members = list(model.members) if hasattr(model, "members") else [model]
    out = torch.empty(len(encoded), model.cfg.d_model)
    with torch.inference_mode():
        for chunk in feature_batches(model, encoded, rows) if batches is None else batches:
            ids, mask = _padded(encoded, chunk, device)
            feats = torch.stack([m(ids, mask).features for m in members]).mean(0)  # [B, D]
            out[chunk] = feats.float().cpu()
            if bar is not None:
                bar.update(len(chunk))
    return out
