"""Reading a decoder folder's weights strictly (uqcore.readers.decoder_weights): a tensor missing,
one the config does not have, or one holding NaN is refused with its name, before the model is used;
the tensors come one at a time (a load holds the base once) and equal the dict form."""

from __future__ import annotations

import pytest
import torch
from safetensors.torch import load_file, save_file

from tests.hf_tiny import tiny_decoder_folder
from uqcore.exceptions import CheckpointError
from uqcore.readers.decoder_weights import (
    each_decoder_tensor,
    hf_decoder_tensors,
    read_hf_decoder_config,
)

pytest.importorskip("transformers")


@pytest.fixture()
def folder(tmp_path):
    return tiny_decoder_folder("llama", tmp_path / "hf")


def _rewrite(folder, change):
    path = folder / "model.safetensors"
    tensors = load_file(str(path))
    change(tensors)
    save_file(tensors, str(path))


def test_the_tensors_come_one_at_a_time_and_equal_the_dict(folder):
    cfg = read_hf_decoder_config(folder)
    stream = each_decoder_tensor(folder, cfg)
    name, first = next(stream)  # a generator: the rest not read yet
    whole = hf_decoder_tensors(folder, cfg)
    assert torch.equal(whole[name], first)
    rest = dict(stream)
    assert set(rest) | {name} == set(whole)
    assert whole["layers.0.attn.qkv.weight"].shape == (32 + 2 * 16, 32)  # grouped K, V


@pytest.mark.parametrize(
    "change, match",
    [
        (lambda t: t.pop("model.layers.1.mlp.up_proj.weight"), "lacks tensor"),
        (lambda t: t.__setitem__("model.extra.weight", torch.zeros(2)), "does not"),
        (
            lambda t: t["model.layers.0.self_attn.k_proj.weight"].__setitem__(0, float("nan")),
            "NaN",
        ),
    ],
    ids=["missing", "extra", "nan"],
)
def test_a_tampered_file_is_refused_with_the_tensor_named(folder, change, match):
    cfg = read_hf_decoder_config(folder)
    _rewrite(folder, change)
    with pytest.raises(CheckpointError, match=match):
        hf_decoder_tensors(folder, cfg)


def test_an_untied_language_model_head_is_not_an_unexpected_tensor(folder):
    cfg = read_hf_decoder_config(folder)
    _rewrite(folder, lambda t: t.__setitem__("lm_head.weight", torch.zeros(3, 32)))
    assert "head.weight" in hf_decoder_tensors(folder, cfg)


@pytest.mark.parametrize(
    "change, word",
    [
        ({"id2label": 5}, "id2label"),
        ({"num_labels": "2"}, "num_labels"),
        ({"num_labels": 1}, "num_labels"),
        ({"rope_theta": "abc"}, "rope_theta"),
        ({"model_type": ["llama"]}, "model"),
    ],
)
def test_a_wrong_typed_field_is_one_line(folder, change, word):
    """Issue 45: every field of the folder's config.json through the typed reader."""
    import json

    doc = json.loads((folder / "config.json").read_text())
    (folder / "config.json").write_text(json.dumps({**doc, **change}))
    with pytest.raises(CheckpointError, match=word) as err:
        read_hf_decoder_config(folder)
    assert "\n" not in str(err.value)
