"""python -m uqlab.share_weights: a checkpoint reads the identical weights of a sibling."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from uqcore import registry
from uqcore.build import build_model
from uqcore.checkpoint import save_checkpoint
from uqcore.config import ModelConfig
from uqcore.exceptions import UQError
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


def test_shared_weights_load_the_same_tensors_from_the_sibling(root) -> None:
    before = registry.load("x-probtrans", root).model.state_dict()
    line = share_weights.share("x-probtrans", "x-trans", root)
    assert "x-probtrans now reads the weights of x-trans" in line
    assert not (root / "x-probtrans" / "model.safetensors").exists()
    ck = registry.load("x-probtrans", root)
    assert ck.config.family == "probtrans" and ck.config.inference.em_iterations == 2
    after = ck.model.state_dict()
    assert all(torch.equal(before[k], after[k]) for k in before)
    assert not [i for i in registry.list_checkpoints(root) if i.error]


def test_only_identical_weights_are_shared(root) -> None:
    torch.manual_seed(2)
    vocab = Vocab.build(TEXTS, max_size=15)
    save_checkpoint(root / "x-trans", build_model(_cfg("trans")), _cfg("trans"), vocab)
    with pytest.raises(UQError, match="differ"):
        share_weights.share("x-probtrans", "x-trans", root)
    assert (root / "x-probtrans" / "model.safetensors").is_file()  # nothing changed


def test_the_command_line_reports_errors_without_a_traceback(root, capsys) -> None:
    assert share_weights.main(["x-probtrans", "--from", "nope", "--root", str(root)]) == 1
    assert "error:" in capsys.readouterr().err
    assert share_weights.main(["x-probtrans", "--from", "x-trans", "--root", str(root)]) == 0


def test_a_shared_vocabulary_is_read_from_the_sibling_and_refused_alone(root) -> None:
    from uqcore.checkpoint import load_checkpoint
    from uqcore.exceptions import CheckpointError

    torch.manual_seed(1)  # other weights, the same vocabulary: as two families of one task
    save_checkpoint(root / "x-sto", build_model(_cfg("sto")), _cfg("sto"), Vocab.build(TEXTS, 15))
    line = share_weights.main(["x-sto", "--from", "x-trans", "--root", str(root), "--vocab"])
    assert line == 0 and not (root / "x-sto" / "vocab.json").exists()
    ck = registry.load("x-sto", root)
    assert ck.vocab.words == Vocab.build(TEXTS, max_size=15).words
    assert (root / "x-sto" / "model.safetensors").is_file()  # its own weights stay
    with pytest.raises(CheckpointError, match="'vocab'"):  # an upload holds its own
        load_checkpoint(root / "x-sto")
    (root / "x-trans" / "vocab.json").write_text('{"words": ["z"]}')
    with pytest.raises(CheckpointError, match="sha256"):  # the sibling's changed: refused
        registry.load("x-sto", root)
    with pytest.raises(UQError, match="does not exist"):  # nothing to share from
        share_weights.share_vocab("x-sto", "x-trans", root)
