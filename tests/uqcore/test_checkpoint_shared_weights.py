"""Checkpoints that share a sibling's weights (uqcore.checkpoint 'weights' record, written by
uqlab.share_weights): loaded only from a folder of checkpoints, hash-checked, never for uploads."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import torch

from uqcore import registry
from uqcore.build import build_model
from uqcore.checkpoint import load_checkpoint, save_checkpoint
from uqcore.config import ModelConfig
from uqcore.exceptions import CheckpointError
from uqcore.text.vocab import Vocab
from uqlab import share_weights

TEXTS = ["a good film", "a bad film", "good acting but a dull plot"]


def _cfg(family: str) -> ModelConfig:
    extra = {"inference": {"em_iterations": 2}} if family == "probtrans" else {}
    return ModelConfig.from_dict(
        dict(
            family=family,
            vocab_size=20,
            n_layers=1,
            n_heads=2,
            d_model=8,
            d_ff=16,
            max_len=8,
            **extra,
        )
    )


@pytest.fixture
def root(tmp_path) -> Path:
    """A folder with trans and probtrans saved from the same weights."""
    torch.manual_seed(0)
    vocab = Vocab.build(TEXTS, max_size=15)
    model = build_model(_cfg("trans"))
    out = tmp_path / "checkpoints"
    for family in ("trans", "probtrans"):
        save_checkpoint(out / f"x-{family}", model, _cfg(family), vocab)
    return out


def test_a_checkpoint_loaded_on_its_own_must_hold_its_weights(root) -> None:
    share_weights.share("x-probtrans", "x-trans", root)
    with pytest.raises(CheckpointError, match="must hold its own model.safetensors"):
        load_checkpoint(root / "x-probtrans")  # what an upload's check calls


def test_changed_or_missing_sibling_weights_are_refused(root) -> None:
    share_weights.share("x-probtrans", "x-trans", root)
    torch.manual_seed(1)
    vocab = Vocab.build(TEXTS, max_size=15)
    save_checkpoint(root / "x-trans", build_model(_cfg("trans")), _cfg("trans"), vocab)
    with pytest.raises(CheckpointError, match="has changed"):
        registry.load("x-probtrans", root)
    listed = {i.name: i for i in registry.list_checkpoints(root)}
    assert "has changed" in listed["x-probtrans"].error
    (root / "x-trans" / "model.safetensors").unlink()
    (root / "x-trans" / "config.json").unlink()
    with pytest.raises(CheckpointError, match="restore 'x-trans'"):
        registry.load("x-probtrans", root)


@pytest.mark.parametrize(
    "record",
    [
        {"checkpoint": "../x-trans", "sha256": "0" * 64},
        {"checkpoint": "x-trans"},
        {"checkpoint": "x-trans", "sha256": "zz"},
        "x-trans",
    ],
)
def test_a_malformed_weights_record_is_refused(root, record) -> None:
    path = root / "x-probtrans" / "config.json"
    doc = json.loads(path.read_text())
    (root / "x-probtrans" / "model.safetensors").unlink()
    path.write_text(json.dumps({**doc, "weights": record}))
    with pytest.raises(CheckpointError, match="'weights' must be an object"):
        registry.load("x-probtrans", root)


def test_weights_and_a_record_together_are_refused(root) -> None:
    share_weights.share("x-probtrans", "x-trans", root)
    (root / "x-probtrans" / "model.safetensors").write_bytes(
        (root / "x-trans" / "model.safetensors").read_bytes()
    )
    with pytest.raises(CheckpointError, match="keep one"):
        registry.load("x-probtrans", root)


def test_weights_path_names_the_file_a_shared_checkpoint_reads(root) -> None:
    from uqcore.checkpoint import weights_path

    assert weights_path(root / "x-probtrans") == root / "x-probtrans" / "model.safetensors"
    share_weights.share("x-probtrans", "x-trans", root)
    assert weights_path(root / "x-probtrans") == root / "x-trans" / "model.safetensors"
