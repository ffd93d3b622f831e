"""Tiny models and batches shared by the unit tests."""

from __future__ import annotations

import torch

from uqcore.config import FAMILIES, AttentionConfig, ModelConfig
from uqcore.model import build_model

STOCHASTIC = ("mcdropout", "sto", "hsto", "bam", "bayesformer")


def tiny_config(family: str, **attention) -> ModelConfig:
    att = {"n_centroids": 3, "em_iterations": 2, "tau2": 2.0, **attention}
    return ModelConfig(
        family=family,
        vocab_size=60,
        n_layers=2,
        n_heads=2,
        d_model=16,
        d_ff=32,
        max_len=16,
        dropout=0.2,
        ensemble_size=3 if family == "ensemble" else 1,
        attention=AttentionConfig(**att),
    ).validate()


def tiny_model(family: str, seed: int = 0, **attention):
    torch.manual_seed(seed)
    return build_model(tiny_config(family, **attention))


def batch() -> tuple[torch.Tensor, torch.Tensor]:
    """Two rows: the first padded after 5 tokens. ``ids [2, 8]``, ``mask [2, 8]``."""
    ids = torch.tensor([[2, 5, 6, 7, 8, 0, 0, 0], [2, 9, 10, 11, 12, 13, 14, 1]])
    return ids, ids != 0


ALL_FAMILIES = FAMILIES
