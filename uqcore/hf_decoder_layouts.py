"""How a Hugging Face decoder classifier folder maps onto the library's decoder.

One :class:`DecoderLayout` per architecture (``model_type``) the decoder reads: the Llama
family (``llama``: Llama, SmolLM...; ``qwen2``: biases on Q, K and V; ``mistral``) and GPT-2.
A layout turns the folder's ``config.json`` into :class:`uqcore.config.ModelConfig` fields
(:meth:`DecoderLayout.fields`, refusing what the decoder does not compute: another activation,
scaled RoPE, a sliding window shorter than the positions, a head width other than
``hidden / heads``) and names the tensors of its ``model.safetensors``
(:meth:`DecoderLayout.names`: our name -> the Hugging Face name(s), Q, K, V concatenated),
relative to ``prefix`` (``model.`` / ``transformer.`` in a ``*ForSequenceClassification``
file); the head ``score`` is absolute. GPT-2 stores its projections as ``Conv1D`` weights
``[in, out]``: :meth:`DecoderLayout.transposed` says which. Data only (no torch); the loader is
:mod:`uqcore.decoder_weights`. Each layout is the ``hf`` entry of one decoder backbone of
:data:`uqcore.backbones.BACKBONES`; they are kept apart from :mod:`uqcore.hf_layouts`, whose
encoders :mod:`uqlab.import_hf` reads.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from uqcore.errors import CheckpointError


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


def _need(hf: dict, *keys: str) -> list:
    missing = [k for k in keys if k not in hf]
    if missing:
        raise CheckpointError(
            f"config.json lacks {', '.join(missing)}; save the model again with save_pretrained."
        )
    return [hf[k] for k in keys]


def _refuse(hf: dict, key: str, allowed: tuple, what: str) -> None:
    value = hf.get(key, allowed[0])
    if value not in allowed:
        raise CheckpointError(f"config.json has {key} {value!r}; the decoder runs {what} only.")


def _llama_fields(hf: dict, qkv_bias_default: bool = False) -> dict[str, Any]:
    vocab, pos, layers, heads, d, ff = _need(
        hf,
        "vocab_size",
        "max_position_embeddings",
        "num_hidden_layers",
        "num_attention_heads",
        "hidden_size",
        "intermediate_size",
    )
    _refuse(hf, "hidden_act", ("silu",), "SwiGLU with SiLU")
    rope = hf.get("rope_parameters") or hf.get("rope_scaling") or {}
    kind = rope.get("rope_type", rope.get("type", "default")) if isinstance(rope, dict) else rope
    if kind != "default":
        raise CheckpointError(f"config.json has RoPE type {kind!r}; only 'default' is supported.")
    theta = rope.get("rope_theta", hf.get("rope_theta", 10000.0))
    head_dim = hf.get("head_dim") or d // heads
    if head_dim * heads != d:
        raise CheckpointError(
            f"config.json has head_dim {head_dim} with {heads} heads and hidden_size {d}; the "
            "decoder needs head_dim * heads = hidden_size."
        )
    window = hf.get("sliding_window")
    if window and hf.get("use_sliding_window", True):  # Mistral: every layer; Qwen2: if used
        pos = min(pos, window)  # inputs no longer than the window: it never hides a key
    bias = hf.get("attention_bias", qkv_bias_default)
    return {
        "vocab_size": vocab,
        "max_len": pos,
        "n_layers": layers,
        "n_heads": heads,
        "d_model": d,
        "d_ff": ff,
        "dropout": hf.get("attention_dropout", 0.0),
        "backbone_params": {
            "n_kv_heads": hf.get("num_key_value_heads") or heads,
            "norm_eps": hf.get("rms_norm_eps", 1e-6),
            "rope_theta": float(theta),
            "qkv_bias": bool(bias),
            "out_bias": bool(hf.get("attention_bias", False)),
            "mlp_bias": bool(hf.get("mlp_bias", False)),
        },
    }


def _gpt2_fields(hf: dict) -> dict[str, Any]:
    vocab, pos, layers, heads, d = _need(
        hf, "vocab_size", "n_positions", "n_layer", "n_head", "n_embd"
    )
    _refuse(hf, "activation_function", ("gelu_new",), "GELU (tanh approximation, 'gelu_new')")
    _refuse(hf, "scale_attn_weights", (True,), "scores scaled by 1 / sqrt(d_head)")
    _refuse(hf, "scale_attn_by_inverse_layer_idx", (False,), "unscaled layers")
    _refuse(hf, "reorder_and_upcast_attn", (False,), "the plain attention order")
    if d % heads:
        raise CheckpointError(f"config.json has n_embd {d} not divisible by n_head {heads}.")
    return {
        "vocab_size": vocab,
        "max_len": pos,
        "n_layers": layers,
        "n_heads": heads,
        "d_model": d,
        "d_ff": hf.get("n_inner") or 4 * d,
        "dropout": hf.get("resid_pdrop", 0.1),
        "backbone_params": {"norm_eps": hf.get("layer_norm_epsilon", 1e-5)},
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
            f"config.json describes a {kind!r} model; the decoder reads "
            f"{', '.join(x.architecture for x in DECODER_LAYOUTS.values())}."
        )
    return layout
