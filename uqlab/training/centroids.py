"""H-STO centroids that start from a pretrained encoder's keys instead of at random.

A random centroid set replaces every key by a mix of vectors the pretrained layer never saw, and
measured on CoLA that bottleneck costs most of the base's skill. Here each stochastic layer's
centroids ``C [d_h, c]`` start as the k-means centres (scikit-learn, seeded) of that layer's key
vectors (every head's, every real token of up to ``texts`` training sentences), so at the start
``K~ = P C^T`` stays close to the keys the base computes.
"""

from __future__ import annotations

from collections.abc import Collection

import torch
from sklearn.cluster import KMeans
from torch import nn

from uqcore.inference.batch_predict import pad
from uqcore.nets.decoder import DecoderClassifier, causal_mask, positions
from uqcore.nets.rotary import rotary_tables
from uqcore.settings import resolve

KEY_ROWS = 16  # texts per forward pass when reading keys: bounds the activations held at once


@torch.no_grad()
def keys_of_layers(
    model: nn.Module,
    rows: list[tuple[int, ...]],
    layers: Collection[int] | None = None,
    batch: int = KEY_ROWS,
) -> dict[int, torch.Tensor]:
    """Layer index -> the key vectors ``[n_real_tokens * H, d_h]`` each attention layer of
    ``layers`` (default: every one) computes for the token-id ``rows`` (deterministic: no noise,
    no dropout), in the order of the rows, their tokens and the heads. The rows go through
    ``batch`` at a time and only up to the highest layer asked for, and only the asked layers'
    keys are kept: on SmolLM2 at 256 tokens reading every layer's keys of 256 texts in one pass
    held 6.5 GB above the model (the H-STO training peak of issue 48)."""
    wanted = set(range(len(model.layers)) if layers is None else layers)
    parts: dict[int, list[torch.Tensor]] = {i: [] for i in sorted(wanted)}
    for lo in range(0, len(rows), batch):
        for i, k in _batch_keys(model, rows[lo : lo + batch], wanted).items():
            parts[i].append(k)
    return {i: torch.cat(p) for i, p in parts.items() if p}


def _batch_keys(
    model: nn.Module, rows: list[tuple[int, ...]], wanted: set[int]
) -> dict[int, torch.Tensor]:
    """:func:`keys_of_layers` of one batch of rows (padded to its longest)."""
    device = next(model.parameters()).device
    ids, mask = pad(rows, max(len(r) for r in rows))
    ids, mask = ids.to(device), mask.to(device)
    s = resolve(model.cfg)
    last = max(wanted, default=-1)
    keys: dict[int, torch.Tensor] = {}
    if isinstance(model, DecoderClassifier):  # causal mask, rotary keys (what the kernel sees)
        pos = positions(mask)
        x = model._embed(ids, pos, s, None)
        rotary = (
            rotary_tables(pos, model.cfg.d_head, model.cfg.backbone_params.rope_theta, x.dtype)
            if model.rotary
            else None
        )
        allowed = causal_mask(mask)
        for i, layer in enumerate(model.layers[: last + 1]):
            if i in wanted:
                _, k, _ = layer.attn._project(layer.norm1(x), s, None, rotary)  # [N, H, L, d_h]
                keys[i] = k.permute(0, 2, 1, 3)[mask].reshape(-1, k.shape[-1]).cpu()
            if i < last:
                x, _, _ = layer(x, allowed, s, None, False, rotary)
        return keys
    x = model._embed(ids, s, None)
    for i, layer in enumerate(model.layers[: last + 1]):
        if i in wanted:
            _, k, _ = layer.attn._project(layer.attention_input(x), s, None)  # [N, H, L, d_h]
            keys[i] = k.permute(0, 2, 1, 3)[mask].reshape(-1, k.shape[-1]).cpu()  # [n * H, d_h]
        if i < last:
            x, _, _ = layer(x, mask, s, None)
    return keys


def init_centroids_from_keys(
    model: nn.Module, rows: list[tuple[int, ...]], seed: int, texts: int = 256
) -> list[int]:
    """Set every H-STO layer's shared centroids to k-means centres of its keys; return the
    layers set. Per-head centroids get the same centres for every head."""
    done = []
    targets = [i for i, layer in enumerate(model.layers) if hasattr(layer.attn, "centroids")]
    if not targets:
        return done
    keys = keys_of_layers(model, rows[:texts], targets)
    for i in targets:
        c = model.layers[i].attn.centroids  # [d_h, c] or [H, d_h, c]
        n = c.shape[-1]
        km = KMeans(n_clusters=n, n_init=4, random_state=seed).fit(keys[i].numpy())
        centres = torch.tensor(km.cluster_centers_, dtype=c.dtype).t()  # [d_h, c]
        with torch.no_grad():
            c.copy_(centres.to(c.device).expand_as(c))
        done.append(i)
    return done
