"""Training configs (uqlab.training.recipe): defaults, file, overrides and flags; bad ones
refused."""

from __future__ import annotations

import json

import pytest

from uqcore.exceptions import ConfigError
from uqlab.training.recipe import build_config


def test_config_rejects_unknown_pretrained_vectors(tmp_path):
    with pytest.raises(ConfigError, match="pretrained_embeddings"):
        build_config("cola", "trans", str(tmp_path), overrides=["pretrained_embeddings=glove"])


def test_config_layers_defaults_file_overrides_and_flags(tmp_path):
    file = tmp_path / "c.json"
    file.write_text(json.dumps({"lr": 0.01, "model": {"n_layers": 2, "inference": {"tau2": 5}}}))
    tc = build_config(
        "cola",
        "hsto",
        "out",
        config_file=str(file),
        overrides=["model.inference.tau2=40", "patience=3"],
        lr=0.02,
    )
    assert tc.lr == 0.02 and tc.patience == 3 and tc.batch_size == 32  # flag > file > defaults
    cfg = tc.model_config(vocab_size=100)
    assert cfg.n_layers == 2 and cfg.inference.tau2 == 40 and cfg.d_model == 128


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"family": "gpt"}, "Unknown family"),
        ({"overrides": ["model.n_heads=7"]}, "divisible"),
        ({"overrides": ["learning_rate=1"]}, "Unknown training setting"),
        ({"overrides": ["model.attention.taux=1"]}, "Unknown field"),
        ({"overrides": ["epochs=0"]}, "epochs"),
        ({"overrides": ["nokey"]}, "key=value"),
        ({"overrides": ["autocast=float16"]}, "autocast must be null or 'bfloat16'"),
    ],
)
def test_bad_configs_fail_before_training(kwargs, message):
    args = {"family": "hsto", **kwargs}
    with pytest.raises(ConfigError, match=message):
        build_config("cola", args.pop("family"), "out", **args)
