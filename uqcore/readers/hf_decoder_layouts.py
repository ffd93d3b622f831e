"""How a Hugging Face decoder classifier folder maps onto the library's decoder.

One :class:`DecoderLayout` per architecture (``model_type``) the decoder reads: the Llama family
(``llama``: Llama, SmolLM...; ``qwen2``: biases on Q, K and V; ``mistral``) and GPT-2. A layout
turns the folder's ``config.json`` into :class:`uqcore.config.ModelConfig` fields
(:meth:`DecoderLayout.fields`, every field read by :class:`uqcore.readers.hf_fields.HFFields`,
refusing what the decoder does not compute: another activation, scaled RoPE, a head width other than
``hidden / heads``; a sliding window bounds the positions read, and so does
:data:`ROTARY_MAX_LEN` where RoPE leaves no table to bound them) and names the tensors of its
``model.safetensors`` (:meth:`DecoderLayout.names`: our name -> the Hugging Face name(s), Q, K,
V concatenated), relative to ``prefix`` (``model.`` / ``transformer.`` in a
``*ForSequenceClassification`` file); the head ``score`` is absolute. GPT-2 stores its
projections as ``Conv1D`` weights ``[in, out]``: :meth:`DecoderLayout.transposed` says which.
Data only (no torch); the loader is :mod:`uqcore.readers.decoder_weights`. Each layout is the ``hf``
entry of one decoder backbone of :data:`uqcore.backbones.BACKBONES`; they are kept apart from
:mod:`uqcore.readers.hf_layouts`, whose encoders :mod:`uqlab.import_hf` reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from uqcore.exceptions import CheckpointError
from uqcore.readers.hf_fields import HFFields, shown


@dataclass(frozen=True)
class DecoderLayout:
    """One decoder architecture: ``backbone`` (its entry of the backbone table),
    ``model_type`` / ``architecture`` as its config.json names them, ``prefix`` of the decoder's
    tensors in a classifier file, ``fields(hf)`` -> ModelConfig fields, ``embeddings`` (our name
    -> theirs), ``layer(i, params)`` -> our name suffix -> theirs for layer ``i`` (which biases
    exist is read from the backbone params), ``final_norm`` and ``conv1d`` (the suffixes of
    Conv1D weights, stored transposed)."""

    backbone: str
    model_type: str
    architecture: str
    prefix: str
    fields: Callable[[dict], dict[str, Any]]
    embeddings: dict[str, tuple[str, ...]]
    layer: Callable[[int, Any], dict[str, tuple[str, ...]]]
    final_norm: dict[str, tuple[str, ...]]
    conv1d: tuple[str, ...] = ()
    # tensors a file may hold that are not weights (GPT-2's saved causal-mask buffers)
    ignored: tuple[str, ...] = ()

    def names(self, n_layers: int, params: Any, with_head: bool) -> dict[str, tuple[str, ...]]:
        """Our tensor name -> its Hugging Face name(s), relative to the prefix except the head's
        (a leading ``/``). ``with_head``: include the classifier's ``score`` layer."""
        out = dict(self.embeddings)
        for i in range(n_layers):
            out |= {f"layers.{i}.{ours}": theirs for ours, theirs in self.layer(i, params).items()}
        out |= self.final_norm
        if with_head:
            out["head.weight"] = ("/score.weight",)
        return out

    @property
    def head(self) -> dict[str, str]:
        """Our classifier weight -> its name in a classifier file (no prefix: ``score``)."""
        return {"head.weight": "score.weight"}

    def transposed(self, ours: str) -> bool:
        """Whether our tensor ``ours`` is stored as a Conv1D weight ``[in, out]``."""
        return any(ours.endswith(suffix) for suffix in self.conv1d)


def _llama_layer(i: int, params: Any) -> dict[str, tuple[str, ...]]:
    hf = f"layers.{i}."
    att = hf + "self_attn."
    out = {
        "attn.qkv.weight": tuple(f"{att}{p}_proj.weight" for p in "qkv"),
        "attn.proj.weight": (f"{att}o_proj.weight",),
        "norm1.weight": (f"{hf}input_layernorm.weight",),
        "norm2.weight": (f"{hf}post_attention_layernorm.weight",),
        "ff_gate.weight": (f"{hf}mlp.gate_proj.weight",),
        "ff1.weight": (f"{hf}mlp.up_proj.weight",),
        "ff2.weight": (f"{hf}mlp.down_proj.weight",),
    }
    if params.qkv_bias:
        out["attn.qkv.bias"] = tuple(f"{att}{p}_proj.bias" for p in "qkv")
    if params.out_bias:
        out["attn.proj.bias"] = (f"{att}o_proj.bias",)
    if params.mlp_bias:
        out |= {
            "ff_gate.bias": (f"{hf}mlp.gate_proj.bias",),
            "ff1.bias": (f"{hf}mlp.up_proj.bias",),
            "ff2.bias": (f"{hf}mlp.down_proj.bias",),
        }
    return out


def _gpt2_layer(i: int, params: Any) -> dict[str, tuple[str, ...]]:
    hf = f"h.{i}."
    parts = {
        "attn.qkv": "attn.c_attn",
        "attn.proj": "attn.c_proj",
        "norm1": "ln_1",
        "norm2": "ln_2",
        "ff1": "mlp.c_fc",
        "ff2": "mlp.c_proj",
    }
    return {
        f"{ours}.{kind}": (f"{hf}{theirs}.{kind}",)
        for ours, theirs in parts.items()
        for kind in ("weight", "bias")
    }


# Tokens a decoder with rotary positions reads at most: RoPE has no table to bound it, so the
# layout bounds it (= uqcore.budget.Budget.max_positions, which counts a learned table's rows).
ROTARY_MAX_LEN = 8192
MAX_ROPE_THETA = 1e12  # published: 1e4 (Llama 2, SmolLM2), 5e5 (Llama 3), 1e6 (Qwen2)
_EPS = dict(low=0.0, high=0.1, low_open=True)  # a norm's epsilon: 1e-12 .. 1e-5 in practice
_RATE = dict(low=0.0, high=1.0, high_open=True)  # a dropout rate


def _rope_theta(c: HFFields) -> float:
    """The RoPE base of a Llama-family config, which must describe plain RoPE: every
    ``rope_type`` (in ``rope_parameters``, transformers 5, or ``rope_scaling``, earlier; a yarn
    scaling beside a default entry is not ignored) "default", and the bases given agree."""
    thetas = {}
    for key in ("rope_parameters", "rope_scaling"):
        rope = c.section(key)
        if rope is None:
            continue
        kind = rope.text("rope_type", None) or rope.text("type", "default")
        if kind != "default":
            raise CheckpointError(
                f"config.json's {key} has RoPE type {shown(kind)}; the decoder computes the "
                "default RoPE only (no scaling): this model would read other numbers here."
            )
        theta = rope.number("rope_theta", low=1.0, high=MAX_ROPE_THETA, low_open=True, default=None)
        if theta is not None:
            thetas[f"{key}.rope_theta"] = theta
    theta = c.number("rope_theta", low=1.0, high=MAX_ROPE_THETA, low_open=True, default=None)
    if theta is not None:
        thetas["rope_theta"] = theta
    if len(set(thetas.values())) > 1:
        given = ", ".join(f"{k} {v:g}" for k, v in thetas.items())
        raise CheckpointError(f"config.json gives {given}; keep one RoPE base.")
    return next(iter(thetas.values()), 10000.0)


def _llama_fields(hf: dict, qkv_bias_default: bool = False) -> dict[str, Any]:
    """ModelConfig fields of a Llama-family config, every field read by :class:`HFFields`."""
    c = HFFields(hf)
    c.need(
        "vocab_size",
        "max_position_embeddings",
        "num_hidden_layers",
        "num_attention_heads",
        "hidden_size",
        "intermediate_size",
    )
    vocab = c.integer("vocab_size")
    pos = c.integer("max_position_embeddings", low=2)
    layers, heads = c.integer("num_hidden_layers"), c.integer("num_attention_heads")
    d, ff = c.integer("hidden_size"), c.integer("intermediate_size")
    c.one_of("hidden_act", ("silu",), "SwiGLU with SiLU ('silu')")
    theta = _rope_theta(c)
    head_dim = c.optional_integer("head_dim") or d // heads
    if head_dim * heads != d:
        raise CheckpointError(
            f"config.json has head_dim {head_dim} with {heads} heads and hidden_size {d}; the "
            "decoder needs head_dim * heads = hidden_size."
        )
    kv = c.optional_integer("num_key_value_heads") or heads
    if heads % kv:
        raise CheckpointError(
            f"config.json's num_key_value_heads {kv} must divide num_attention_heads {heads}."
        )
    window = c.optional_integer("sliding_window", low=0)  # null or 0: none
    used = c.flag("use_sliding_window", True)
    if window and used:  # Mistral: every layer; Qwen2: if used
        pos = min(pos, window)  # inputs no longer than the window: it never hides a key
    bias = c.flag("attention_bias", qkv_bias_default)
    return {
        "vocab_size": vocab,
        "max_len": min(pos, ROTARY_MAX_LEN),  # no position table: the reading bound
        "n_layers": layers,
        "n_heads": heads,
        "d_model": d,
        "d_ff": ff,
        "dropout": c.number("attention_dropout", **_RATE, default=0.0),
        "backbone_params": {
            "n_kv_heads": kv,
            "norm_eps": c.number("rms_norm_eps", **_EPS, default=1e-6),
            "rope_theta": theta,
            "qkv_bias": bias,
            "out_bias": c.flag("attention_bias", False),
            "mlp_bias": c.flag("mlp_bias", False),
        },
    }


def _gpt2_fields(hf: dict) -> dict[str, Any]:
    """ModelConfig fields of a GPT-2 config, every field read by :class:`HFFields`."""
    c = HFFields(hf)
    c.need("vocab_size", "n_positions", "n_layer", "n_head", "n_embd")
    vocab, pos = c.integer("vocab_size"), c.integer("n_positions", low=2)
    layers, heads, d = c.integer("n_layer"), c.integer("n_head"), c.integer("n_embd")
    c.one_of("activation_function", ("gelu_new",), "GELU (tanh approximation, 'gelu_new')")
    c.one_of("scale_attn_weights", (True,), "scores scaled by 1 / sqrt(d_head)")
    c.one_of("scale_attn_by_inverse_layer_idx", (False,), "unscaled layers")
    c.one_of("reorder_and_upcast_attn", (False,), "the plain attention order")
    if d % heads:
        raise CheckpointError(f"config.json has n_embd {d} not divisible by n_head {heads}.")
    return {
        "vocab_size": vocab,
        "max_len": pos,  # a learned table of this many rows: the budget counts it
        "n_layers": layers,
        "n_heads": heads,
        "d_model": d,
        "d_ff": c.optional_integer("n_inner") or 4 * d,
        "dropout": c.number("resid_pdrop", **_RATE, default=0.1),
        "backbone_params": {"norm_eps": c.number("layer_norm_epsilon", **_EPS, default=1e-5)},
    }


_LLAMA_EMBEDDINGS = {"embed.weight": ("embed_tokens.weight",)}
_LLAMA_NORM = {"norm.weight": ("norm.weight",)}


def _llama_like(backbone: str, model_type: str, architecture: str, fields) -> DecoderLayout:
    return DecoderLayout(
        backbone,
        model_type,
        architecture,
        "model.",
        fields,
        _LLAMA_EMBEDDINGS,
        _llama_layer,
        _LLAMA_NORM,
        # a causal LM base's untied language-model head: read by uqlab.label_words only
        ignored=("lm_head.weight",),
    )


LLAMA = _llama_like("llama", "llama", "LlamaForSequenceClassification", _llama_fields)
QWEN2 = _llama_like(
    "qwen2", "qwen2", "Qwen2ForSequenceClassification", lambda hf: _llama_fields(hf, True)
)
MISTRAL = _llama_like("mistral", "mistral", "MistralForSequenceClassification", _llama_fields)
GPT2 = DecoderLayout(
    "gpt2",
    "gpt2",
    "GPT2ForSequenceClassification",
    "transformer.",
    _gpt2_fields,
    {"embed.weight": ("wte.weight",), "pos.weight": ("wpe.weight",)},
    _gpt2_layer,
    {"norm.weight": ("ln_f.weight",), "norm.bias": ("ln_f.bias",)},
    conv1d=("attn.qkv.weight", "attn.proj.weight", "ff1.weight", "ff2.weight"),
    ignored=(".attn.bias", ".attn.masked_bias"),
)
DECODER_LAYOUTS: dict[str, DecoderLayout] = {x.model_type: x for x in (LLAMA, QWEN2, MISTRAL, GPT2)}


def decoder_layout_of(hf: dict) -> DecoderLayout:
    """The decoder layout of a Hugging Face config (by ``model_type``); a message naming the
    supported ones otherwise."""
    kind = hf.get("model_type")
    layout = DECODER_LAYOUTS.get(kind) if isinstance(kind, str) else None
    if layout is None:
        raise CheckpointError(
            f"config.json describes a {shown(kind)} model; the decoder reads "
            f"{', '.join(x.architecture for x in DECODER_LAYOUTS.values())}."
        )
    return layout
