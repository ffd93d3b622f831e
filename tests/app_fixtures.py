"""Tiny trained-shape checkpoints for the app tests (fast, independent of assets/)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from tests.helpers import tiny_config
from ui.logic.catalog import presets
from uqcore.build import build_model
from uqcore.checkpoint import save_checkpoint
from uqcore.families import FAMILY_NAMES as FAMILIES
from uqcore.text.vocab import Vocab


def make_checkpoints(
    root: Path, prefix: str = "cola", task: str = "cola", families=FAMILIES
) -> Path:
    """``<prefix>-<family>`` for every family (untrained, of ``task``): 2 layers, width 16,
    a vocabulary of the CoLA presets."""
    texts = [p.text for p in presets("cola")] + ["a great movie", "the film was dull"]
    vocab = Vocab.build(texts, max_size=500)
    labels = {"cola": ["unacceptable", "acceptable"]}.get(task, ["neg", "pos"])
    for family in families:
        cfg = tiny_config(family).replace(vocab_size=len(vocab), max_len=64, dropout=0.1)
        torch.manual_seed(0)
        model = build_model(cfg)
        training = {
            "task": task,
            "family": family,
            "label_names": labels,
            "splits": {"train": 10, "dev": 2, "test": 2, "ood": 2},
        }
        save_checkpoint(
            root / f"{prefix}-{family}",
            model,
            cfg,
            vocab,
            training=training,
            card=f"# {prefix}-{family}\n\nA tiny untrained test model.\n",
        )
    return root


@pytest.fixture(scope="module")
def ckdir(tmp_path_factory) -> Path:
    """Tiny ``cola-<family>`` checkpoints, once per test module."""
    return make_checkpoints(tmp_path_factory.mktemp("checkpoints"))


@pytest.fixture()
def app_checkpoints(ckdir, monkeypatch) -> Path:
    """Point the app at the tiny checkpoints (modules use it with ``autouse``)."""
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(ckdir))
    return ckdir
