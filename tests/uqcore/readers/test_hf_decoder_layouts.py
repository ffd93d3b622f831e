"""The decoder layouts read every field of an untrusted config.json through the typed reader
(issue 45): each wrong-typed, out-of-range, zero or negative field is refused with one line
naming it; scaled RoPE is refused wherever it is given; a RoPE model's positions are a reading
bound, not a table the budget counts (a Llama of 131,072 positions is accepted)."""

from __future__ import annotations

import math

import pytest

from uqcore.budget import DEFAULT_BUDGET, check_budget
from uqcore.config import ModelConfig
from uqcore.exceptions import CheckpointError
from uqcore.readers.hf_decoder_layouts import ROTARY_MAX_LEN, decoder_layout_of

LLAMA = {
    "model_type": "llama",
    "vocab_size": 300,
    "max_position_embeddings": 64,
    "num_hidden_layers": 2,
    "num_attention_heads": 4,
    "num_key_value_heads": 2,
    "hidden_size": 32,
    "intermediate_size": 64,
    "hidden_act": "silu",
    "rms_norm_eps": 1e-6,
    "attention_dropout": 0.0,
    "attention_bias": False,
    "mlp_bias": False,
    "head_dim": 8,
    "rope_parameters": {"rope_theta": 10000.0, "rope_type": "default"},
}
QWEN2 = {**LLAMA, "model_type": "qwen2", "sliding_window": None, "use_sliding_window": False}
MISTRAL = {**LLAMA, "model_type": "mistral", "sliding_window": 4096}
GPT2 = {
    "model_type": "gpt2",
    "vocab_size": 300,
    "n_positions": 64,
    "n_layer": 2,
    "n_head": 4,
    "n_embd": 32,
    "n_inner": None,
    "resid_pdrop": 0.1,
    "layer_norm_epsilon": 1e-5,
    "activation_function": "gelu_new",
    "scale_attn_weights": True,
    "scale_attn_by_inverse_layer_idx": False,
    "reorder_and_upcast_attn": False,
}
CONFIGS = {"llama": LLAMA, "qwen2": QWEN2, "mistral": MISTRAL, "gpt2": GPT2}

# the fields each layout reads, by kind: every one gets each wrong value of its kind
INTEGERS = {
    "llama": (
        "vocab_size",
        "max_position_embeddings",
        "num_hidden_layers",
        "num_attention_heads",
        "num_key_value_heads",
        "hidden_size",
        "intermediate_size",
        "head_dim",
    ),
    "gpt2": ("vocab_size", "n_positions", "n_layer", "n_head", "n_embd", "n_inner"),
}
INTEGERS["qwen2"] = (*INTEGERS["llama"], "sliding_window")
INTEGERS["mistral"] = INTEGERS["qwen2"]
NUMBERS = {
    "llama": ("rms_norm_eps", "attention_dropout", "rope_theta"),
    "gpt2": ("resid_pdrop", "layer_norm_epsilon"),
}
NUMBERS["qwen2"] = NUMBERS["mistral"] = NUMBERS["llama"]
FLAGS = {"llama": ("attention_bias", "mlp_bias"), "gpt2": ()}
FLAGS["qwen2"] = FLAGS["mistral"] = (*FLAGS["llama"], "use_sliding_window")
CHOICES = {
    "llama": ("hidden_act",),
    "gpt2": (
        "activation_function",
        "scale_attn_weights",
        "scale_attn_by_inverse_layer_idx",
        "reorder_and_upcast_attn",
    ),
}
CHOICES["qwen2"] = CHOICES["mistral"] = CHOICES["llama"]

WRONG = {
    "integer": ("4", 2.5, True, -1, [4], {"n": 4}),
    "number": ("abc", [1.0], {"x": 1}, True, -1.0, math.inf, math.nan),
    "flag": ("x", 1, [True]),
    "choice": (["silu"], {"a": 1}, 3, "x"),
}


def _cases():
    for arch in CONFIGS:
        kinds = {"integer": INTEGERS, "number": NUMBERS, "flag": FLAGS, "choice": CHOICES}
        for kind, table in kinds.items():
            for field in table[arch]:
                for value in WRONG[kind]:
                    if kind == "integer" and field == "sliding_window" and value == -1:
                        continue  # sliding_window 0 means none: -1 is tested below
                    yield pytest.param(arch, field, value, id=f"{arch}-{field}-{value!r}"[:60])
    yield pytest.param("gpt2", "n_head", 0, id="gpt2-n_head-0")
    yield pytest.param("llama", "num_attention_heads", 0, id="llama-heads-0")
    yield pytest.param("qwen2", "sliding_window", -1, id="qwen2-sliding_window--1")
    yield pytest.param("llama", "rope_theta", 1e-300, id="llama-rope_theta-1e-300")
    yield pytest.param("llama", "rope_theta", 1.0, id="llama-rope_theta-1")


def _fields(hf: dict) -> dict:
    return decoder_layout_of(hf).fields(hf)


def _one_line(hf: dict, *words: str) -> str:
    with pytest.raises(CheckpointError) as err:
        _fields(hf)
    text = str(err.value)
    assert "\n" not in text and len(text) < 300, text
    for word in words:
        assert word in text, text
    return text


@pytest.mark.parametrize("arch, field, value", list(_cases()))
def test_each_wrong_field_is_refused_in_one_line_naming_it(arch, field, value):
    hf = {**CONFIGS[arch], field: value}
    if field == "sliding_window":
        hf["use_sliding_window"] = True
    _one_line(hf, field)


@pytest.mark.parametrize("where", ["rope_parameters", "rope_scaling"])
@pytest.mark.parametrize("value", ["abc", [1], 0.5, True])
def test_a_wrong_rope_theta_is_refused_wherever_it_is_given(where, value):
    _one_line({**LLAMA, where: {"rope_type": "default", "rope_theta": value}}, "rope_theta")


@pytest.mark.parametrize("value", [[1], {"a": 1}, 3, None])
def test_a_model_type_that_is_not_a_string_is_refused(value):
    with pytest.raises(CheckpointError, match="describes a") as err:
        decoder_layout_of({**LLAMA, "model_type": value})
    assert "\n" not in str(err.value)


def test_a_yarn_scaling_beside_a_default_rope_parameters_is_refused():
    """transformers 5 writes ``rope_parameters``; an older ``rope_scaling`` beside it was
    silently ignored, and the model read other numbers here than there."""
    yarn = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
    _one_line({**LLAMA, "rope_scaling": yarn}, "rope_scaling", "'yarn'")
    _one_line({**LLAMA, "rope_parameters": {**yarn, "rope_theta": 1e4}}, "rope_parameters")
    _one_line({**LLAMA, "rope_scaling": {"type": "linear", "factor": 2.0}}, "'linear'")
    _one_line({**LLAMA, "rope_scaling": "yarn"}, "rope_scaling", "an object or null")
    _one_line({**LLAMA, "rope_parameters": {"rope_type": ["yarn"]}}, "rope_type", "a string")


def test_rope_bases_that_disagree_are_refused_and_agreeing_ones_read():
    _one_line({**LLAMA, "rope_theta": 5e5}, "rope_theta 500000", "rope_parameters.rope_theta")
    fields = _fields({**LLAMA, "rope_theta": 1e4})
    assert fields["backbone_params"]["rope_theta"] == 1e4
    older = {k: v for k, v in LLAMA.items() if k != "rope_parameters"} | {"rope_theta": 5e5}
    assert _fields(older)["backbone_params"]["rope_theta"] == 5e5
    default = {k: v for k, v in LLAMA.items() if k != "rope_parameters"}
    assert _fields(default)["backbone_params"]["rope_theta"] == 1e4


def test_a_missing_field_is_named():
    hf = {k: v for k, v in GPT2.items() if k not in ("n_head", "n_embd")}
    _one_line(hf, "lacks n_head, n_embd")


def test_heads_that_do_not_divide_the_width_are_refused():
    _one_line({**GPT2, "n_embd": 30}, "not divisible")
    _one_line({**LLAMA, "num_key_value_heads": 3}, "must divide")
    _one_line({**LLAMA, "head_dim": 16}, "head_dim * heads")


def _config(hf: dict) -> ModelConfig:
    fields = _fields(hf)
    backbone = decoder_layout_of(hf).backbone
    return ModelConfig.from_dict({**fields, "backbone": backbone, "num_classes": 2})


@pytest.mark.parametrize("positions", [32_768, 131_072])
def test_a_rope_model_of_many_positions_reads_within_the_bound(positions):
    """Qwen2's usual 32,768 and Llama 3.2's 131,072 positions: RoPE holds no table, so they
    are not refused by the position budget; the reading length stays bounded on its own."""
    for base in (LLAMA, QWEN2):
        cfg = check_budget(_config({**base, "max_position_embeddings": positions}))
        assert cfg.max_len == ROTARY_MAX_LEN == DEFAULT_BUDGET.max_positions
    window = _config({**MISTRAL, "max_position_embeddings": positions, "sliding_window": 4096})
    assert window.max_len == 4096


def test_positions_are_counted_only_where_a_table_is_learned():
    small = _config(LLAMA)
    assert _config({**LLAMA, "max_position_embeddings": 4096}).n_parameters() == (
        small.n_parameters()
    )
    gpt2 = _config(GPT2)
    assert _config({**GPT2, "n_positions": 128}).n_parameters() == gpt2.n_parameters() + 64 * 32
    with pytest.raises(CheckpointError, match="positions"):  # GPT-2's table is held: counted
        check_budget(_config({**GPT2, "n_positions": 131_072}))
