"""Model config format 2 (uqcore.config): format 1 read as format 2, trained values and
overrides, every bad config refused. The in-place upgrade: tests/uqlab/test_upgrade.py."""

from __future__ import annotations

import json
import math

import pytest

from tests.helpers import V1_HSTO, tiny_config
from uqcore.build import build_model
from uqcore.checkpoint import load_checkpoint, save_checkpoint
from uqcore.config import ModelConfig, upgrade_v1
from uqcore.exceptions import CheckpointError, ConfigError
from uqcore.kernels.bayesian import BamParams
from uqcore.settings import SamplingSettings, resolve
from uqcore.text.vocab import Vocab


def test_format_1_keeps_only_what_the_family_has():
    v2 = upgrade_v1(V1_HSTO)
    assert v2["attention"] == {
        "n_centroids": 4,
        "centroid_side": "key",
        "centroids_per_head": False,
    }
    assert v2["inference"] == {"tau1": 1, "tau2": 1, "noise_scale": 1.0, "hard": False}
    bam = upgrade_v1({**V1_HSTO, "family": "bam"})
    cfg = ModelConfig.from_dict(bam)
    assert cfg.attention == BamParams(weibull_k=10.0)
    assert cfg.inference.set_fields() == {"noise_scale": 1.0, "bam_mode": "sample"}
    with pytest.raises(ConfigError, match="Unknown field 'bam_kk'"):
        upgrade_v1({"family": "bam", "attention": {"bam_kk": 3}})


def test_partial_training_overrides_upgrade_with_the_family_given():
    old = {"n_layers": 4, "attention": {"tau2": 20, "n_centroids": 8}}
    assert upgrade_v1(old, "hsto") == {
        "n_layers": 4,
        "attention": {"n_centroids": 8},
        "inference": {"tau2": 20},
    }
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


def test_an_unknown_format_version_is_refused(tmp_path):
    cfg = tiny_config("trans")
    vocab = Vocab.build(["a b"], max_size=10)
    folder = save_checkpoint(
        tmp_path / "ck",
        build_model(cfg.replace(vocab_size=len(vocab))),
        cfg.replace(vocab_size=len(vocab)),
        vocab,
    )
    doc = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**doc, "format_version": 3}))
    with pytest.raises(CheckpointError, match="format_version 1, 2 only"):
        load_checkpoint(folder)


def test_stochastic_layers_are_checked():
    with pytest.raises(ConfigError, match="stochastic_layers"):
        ModelConfig(family="hsto", n_layers=2, stochastic_layers=(2,)).validate()
    with pytest.raises(ConfigError, match="stochastic_layers"):
        ModelConfig(family="hsto", n_layers=2, stochastic_layers=()).validate()
    cfg = ModelConfig(family="hsto", n_layers=3, stochastic_layers=(2,))
    assert ModelConfig.from_dict(cfg.to_dict()) == cfg and cfg.first_stochastic_layer == 2


@pytest.mark.parametrize("bad", [-1, 1.5, "2", True, [2], 10**30, 100])
def test_a_decoders_pool_skip_id_is_a_token_id_or_null(bad):
    """An uploaded config.json is data: the id a decoder's head skips is null or an id of
    its vocabulary, refused in one line otherwise (never an overflow inside torch)."""
    doc = {"backbone": "llama", "vocab_size": 100, "n_heads": 4, "d_model": 32, "max_len": 16}
    ok = ModelConfig.from_dict({**doc, "backbone_params": {"n_kv_heads": 2, "pool_skip_id": 99}})
    assert ok.backbone_params.pool_skip_id == 99
    assert ModelConfig.from_dict(ok.to_dict()) == ok
    with pytest.raises(ConfigError, match="pool_skip_id"):
        ModelConfig.from_dict({**doc, "backbone_params": {"n_kv_heads": 2, "pool_skip_id": bad}})


def test_config_rejects_impossible_shapes_and_unknown_family():
    with pytest.raises(ConfigError, match="divisible"):
        tiny_config("trans").replace(n_heads=3)
    with pytest.raises(ConfigError, match="Unknown model family"):
        tiny_config("trans").replace(family="gpt")
    with pytest.raises(ConfigError, match="Unknown field"):
        type(tiny_config("trans")).from_dict({"family": "trans", "n_layer": 2})
    cfg = tiny_config("hsto")
    assert type(cfg).from_dict(cfg.to_dict()) == cfg
    assert math.isclose(tiny_config("trans").softmax_tau, math.sqrt(8))
    assert build_model(cfg).cfg == cfg
