"""The named registry of checkpoints (uqcore.registry)."""

from __future__ import annotations

from pathlib import Path

import pytest
import torch

from uqcore import registry
from uqcore.build import build_model
from uqcore.checkpoint import save_checkpoint
from uqcore.config import ModelConfig
from uqcore.exceptions import CheckpointError
from uqcore.text.vocab import Vocab

TEXTS = ["the film was great", "a dull plot and bad acting", "superb cast, great fun!"]


def tiny_cfg(family: str = "trans", **changes) -> ModelConfig:
    base = dict(vocab_size=50, n_layers=2, n_heads=2, d_model=16, d_ff=32, max_len=16)
    base["ensemble_size"] = 2 if family == "ensemble" else 1
    return ModelConfig(family=family, **{**base, **changes})


def _boom(*args, **kwargs):
    raise AssertionError("must not be called here")


@pytest.fixture(autouse=True, scope="module")
def _isolated():
    """One thread: for tiny models thread hand-off costs more than the maths (ms per op on a
    busy machine). ``torch.load`` fails: nothing here may unpickle."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(torch, "load", _boom)
        yield
    torch.set_num_threads(before)


@pytest.fixture
def vocab() -> Vocab:
    return Vocab.build(TEXTS, max_size=40)


@pytest.fixture
def folder(tmp_path, vocab) -> Path:
    root = tmp_path / "checkpoints"
    for name, family, info in [("imdb-sto", "sto", {}), ("cr-trans", "trans", {"task": "cola"})]:
        cfg = tiny_cfg(family)
        save_checkpoint(root / name, build_model(cfg), cfg, vocab, training=info)
    (root / "notes").mkdir()  # no config.json: not a checkpoint
    (root / "imdb-broken").mkdir()
    (root / "imdb-broken" / "config.json").write_text(
        '{"format_version": 99, "model": {"family": "sto"}}'
    )
    return root


def test_registry_lists_and_loads(folder) -> None:
    infos = registry.list_checkpoints(folder)
    assert [i.name for i in infos] == ["cr-trans", "imdb-broken", "imdb-sto"]
    good = {i.name: i for i in infos if i.error is None}
    assert good["imdb-sto"].family == "sto" and good["imdb-sto"].task == "imdb"
    assert good["cr-trans"].task == "cola"  # training info wins over the name
    broken = infos[1]
    assert broken.family == "sto" and "is missing model.safetensors" in broken.error
    ckpt = registry.load("imdb-sto", root=folder)
    assert ckpt.config.family == "sto" and ckpt.name == "imdb-sto"


def test_registry_errors(folder, tmp_path) -> None:
    with pytest.raises(CheckpointError, match="Available: cr-trans, imdb-broken, imdb-sto"):
        registry.load("nope", root=folder)
    for bad in ["../x", "a/b", "..", "", ".hidden"]:
        with pytest.raises(CheckpointError, match="checkpoint name"):
            registry.load(bad, root=folder)
    with pytest.raises(CheckpointError, match="does not exist; train a model"):
        registry.load("imdb-sto", root=tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(CheckpointError, match="is empty"):
        registry.load("imdb-sto", root=tmp_path / "empty")
    assert registry.list_checkpoints(tmp_path / "missing") == []
    assert not hasattr(registry, "DEFAULT_CHECKPOINT_DIR")  # the library knows no repo folder
    with pytest.raises(CheckpointError, match="no default folder"):
        registry.list_checkpoints(None)
