"""The format-1 upgrade of checkpoint configs (uqlab.upgrade)."""

from __future__ import annotations

import json

import torch

from tests.helpers import V1_HSTO, batch
from uqcore.build import build_model
from uqcore.checkpoint import load_checkpoint, save_checkpoint
from uqcore.config import ModelConfig, upgrade_v1
from uqcore.inference.sampling import sample
from uqcore.text.vocab import Vocab
from uqlab.upgrade import main as upgrade_main


def test_a_format_1_checkpoint_loads_as_format_2_and_upgrades_in_place(tmp_path):
    vocab = Vocab.build(["a great movie", "a dull film"], max_size=50)
    cfg = ModelConfig.from_dict(upgrade_v1({**V1_HSTO, "vocab_size": len(vocab)}))
    torch.manual_seed(0)
    model = build_model(cfg)
    folder = save_checkpoint(
        tmp_path / "ck",
        model,
        cfg,
        vocab,
        training={
            "task": "cola",
            "family": "hsto",
            "config": {"family": "hsto", "model": {"attention": {"tau1": 1, "n_centroids": 4}}},
        },
    )
    doc = json.loads((folder / "config.json").read_text())
    doc["format_version"] = 1
    doc["model"] = {**V1_HSTO, "vocab_size": len(vocab)}
    doc["training"]["config"]["model"] = {"attention": {"tau1": 1, "n_centroids": 4}}
    (folder / "config.json").write_text(json.dumps(doc))
    old = load_checkpoint(folder)
    assert old.config == cfg
    assert upgrade_main([str(folder)]) == 0
    new_doc = json.loads((folder / "config.json").read_text())
    assert new_doc["format_version"] == 2 and "bam_k" not in json.dumps(new_doc)
    assert new_doc["training"]["config"]["model"] == {
        "attention": {"n_centroids": 4},
        "inference": {"tau1": 1},
    }
    ids, mask = batch()
    ids = ids.clamp(max=len(vocab) - 1)
    a = sample(old.model, ids, mask, T=3, seed=1).probs
    b = sample(load_checkpoint(folder).model, ids, mask, T=3, seed=1).probs
    assert torch.equal(a, b)
    assert upgrade_main([str(folder)]) == 0  # already format 2: left as it is
