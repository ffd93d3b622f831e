"""Model config format 2 (uqcore.config) and the format-1 upgrade (uqlab.upgrade)."""

from __future__ import annotations

import json

import pytest
import torch

from tests.helpers import batch, tiny_config
from uqcore.build import build_model
from uqcore.checkpoint import load_checkpoint, save_checkpoint
from uqcore.config import ModelConfig, upgrade_v1
from uqcore.errors import CheckpointError, ConfigError
from uqcore.kernels.bayesian import BamParams
from uqcore.sampling import sample
from uqcore.settings import SamplingSettings, resolve
from uqcore.vocab import Vocab
from uqlab.upgrade import main as upgrade_main

# cola-hsto's model as format 1 wrote it: every family's fields in one flat attention record
V1_HSTO = {
    "family": "hsto", "vocab_size": 60, "num_classes": 2, "max_len": 16, "n_layers": 2,
    "n_heads": 2, "d_model": 16, "d_ff": 32, "dropout": 0.1, "ensemble_size": 1,
    "attention": {
        "tau": None, "tau1": 1, "tau2": 1, "noise_scale": 1.0, "hard": False, "n_centroids": 4,
        "centroid_side": "key", "centroids_per_head": False, "bam_dist": "weibull",
        "bam_prior": "contextual", "bam_k": 10.0, "bam_sigma": 0.5, "bam_beta": 1.0,
        "bam_prior_sigma": 1.0, "bam_d_mid": 10, "bam_inference": "sample", "em_iterations": 0,
        "em_precision": 1.0,
    },
}  # fmt: skip


def test_format_1_keeps_only_what_the_family_has():
    v2 = upgrade_v1(V1_HSTO)
    assert v2["attention"] == {"n_centroids": 4, "centroid_side": "key",
                               "centroids_per_head": False}  # fmt: skip
    assert v2["inference"] == {"tau1": 1, "tau2": 1, "noise_scale": 1.0, "hard": False}
    bam = upgrade_v1({**V1_HSTO, "family": "bam"})
    cfg = ModelConfig.from_dict(bam)
    assert cfg.attention == BamParams(weibull_k=10.0)
    assert cfg.inference.set_fields() == {"noise_scale": 1.0, "bam_mode": "sample"}
    with pytest.raises(ConfigError, match="Unknown field 'bam_kk'"):
        upgrade_v1({"family": "bam", "attention": {"bam_kk": 3}})


def test_partial_training_overrides_upgrade_with_the_family_given():
    old = {"n_layers": 4, "attention": {"tau2": 20, "n_centroids": 8}}
    assert upgrade_v1(old, "hsto") == {"n_layers": 4, "attention": {"n_centroids": 8},
                                       "inference": {"tau2": 20}}  # fmt: skip
    assert upgrade_v1({"attention": {"em_iterations": 3}}, "probtrans") == {
        "inference": {"em_iterations": 3}
    }


def test_trained_values_resolve_before_overrides():
    cfg = tiny_config("hsto", tau1=0.5, tau2=7.0)
    fs = resolve(cfg)
    assert (fs.tau1, fs.tau2, fs.noise_scale, fs.em_iterations) == (0.5, 7.0, 1.0, 0)
    assert resolve(cfg, SamplingSettings(tau2=3.0)).tau2 == 3.0


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"attention": BamParams()}, "must be a HstoParams"),
        ({"inference": SamplingSettings(dropout=0.3)}, "not read"),
        ({"inference": SamplingSettings(tau2=-1.0)}, "inference.tau2"),
        ({"inference": SamplingSettings(hard="yes")}, "true or false"),
    ],
)
def test_bad_format_2_configs_are_refused(change, message):
    import dataclasses

    with pytest.raises(ConfigError, match=message):
        dataclasses.replace(tiny_config("hsto"), **change).validate()


def test_a_format_1_checkpoint_loads_as_format_2_and_upgrades_in_place(tmp_path):
    vocab = Vocab.build(["a great movie", "a dull film"], max_size=50)
    cfg = ModelConfig.from_dict(upgrade_v1({**V1_HSTO, "vocab_size": len(vocab)}))
    torch.manual_seed(0)
    model = build_model(cfg)
    folder = save_checkpoint(tmp_path / "ck", model, cfg, vocab, training={
        "task": "cola", "family": "hsto",
        "config": {"family": "hsto", "model": {"attention": {"tau1": 1, "n_centroids": 4}}},
    })  # fmt: skip
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


def test_an_unknown_format_version_is_refused(tmp_path):
    cfg = tiny_config("trans")
    vocab = Vocab.build(["a b"], max_size=10)
    folder = save_checkpoint(tmp_path / "ck", build_model(cfg.replace(vocab_size=len(vocab))),
                             cfg.replace(vocab_size=len(vocab)), vocab)  # fmt: skip
    doc = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**doc, "format_version": 3}))
    with pytest.raises(CheckpointError, match="format_version 1, 2 only"):
        load_checkpoint(folder)
