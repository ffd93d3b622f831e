"""A GGUF file of a Llama-architecture model turned into a base folder the library reads.

:func:`convert` reads the file with the ``gguf`` package (pure numpy: no llama.cpp), dequantizes
every tensor exactly as ``gguf.dequantize`` does (what transformers' GGUF reader calls too),
undoes llama.cpp's interleaving of the rotary halves in the query and key rows (its converter
permutes them; transformers' reader permutes them back the same way) and writes:

- ``model.safetensors``: the decoder's tensors under Hugging Face's ``LlamaForCausalLM`` names
  (``model.embed_tokens.weight``, ``model.layers.{i}.self_attn.q_proj.weight``...), float16,
  without the language-model head (a classifier does not read it; SmolLM2 ties it to the
  embeddings anyway);
- ``config.json``: a ``LlamaConfig`` from the file's metadata (layers, widths, heads, rotary
  base, RMSNorm epsilon, special ids), plus ``uq_converted_from`` (the file and its sha256);
- ``tokenizer.json``: the file's byte-level BPE (vocabulary, merges, special tokens) for the
  ``tokenizers`` library, SmolLM's pre-tokenizer (single digits, then GPT-2's byte-level split)
  and the library's input template: ``<bos> text <eos>`` (for SmolLM2 ``<|im_start|>`` ...
  ``<|im_end|>``), so an encoding has a first and a last special token as the encoders' do and
  the classifier reads the closing token.

The output is deterministic: the same GGUF file gives the same bytes (its sha256 is checked by
:mod:`uqlab.bases`). Float16 keeps every dequantized value to within its rounding (2^-11
relative); the golden test compares against transformers' reading cast the same way.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from safetensors.torch import save_file

from uqcore.exceptions import ConfigError

WEIGHTS = "model.safetensors"
# GGUF tensor name (after "blk.{i}.") -> Hugging Face name (after "model.layers.{i}.")
_LAYER_NAMES = {
    "attn_q.weight": "self_attn.q_proj.weight",
    "attn_k.weight": "self_attn.k_proj.weight",
    "attn_v.weight": "self_attn.v_proj.weight",
    "attn_output.weight": "self_attn.o_proj.weight",
    "ffn_gate.weight": "mlp.gate_proj.weight",
    "ffn_up.weight": "mlp.up_proj.weight",
    "ffn_down.weight": "mlp.down_proj.weight",
    "attn_norm.weight": "input_layernorm.weight",
    "ffn_norm.weight": "post_attention_layernorm.weight",
}
_TOP_NAMES = {
    "token_embd.weight": "model.embed_tokens.weight",
    "output_norm.weight": "model.norm.weight",
}
_SKIPPED = ("output.weight", "rope_freqs.weight")  # the LM head; precomputed rotary factors
CONTROL = 3  # gguf token type of special (control) tokens


def _field(reader, key: str, default: Any = None) -> Any:
    field = reader.fields.get(key)
    return default if field is None else field.contents()


def unpermute(w: np.ndarray, heads: int) -> np.ndarray:
    """Undo llama.cpp's rotary interleave of a ``[heads * d_head, in]`` query / key weight:
    its rows ``(head, pair, half)`` back to ``(head, half, pair)`` (Hugging Face's order)."""
    half = w.shape[0] // heads // 2
    return w.reshape(heads, half, 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)


def read_config(reader) -> dict[str, Any]:
    """A Hugging Face ``LlamaConfig`` dict from a GGUF file's metadata; :class:`ConfigError` for
    another architecture or scaled rotary positions."""
    arch = _field(reader, "general.architecture")
    if arch != "llama":
        raise ConfigError(f"The GGUF file holds a {arch!r} model; only 'llama' is converted.")
    if _field(reader, "llama.rope.scaling.type") not in (None, "none"):
        raise ConfigError("The GGUF file uses scaled rotary positions, which the decoder lacks.")
    heads = int(_field(reader, "llama.attention.head_count"))
    tokens = _field(reader, "tokenizer.ggml.tokens")
    return {
        "architectures": ["LlamaForCausalLM"],
        "model_type": "llama",
        "vocab_size": int(_field(reader, "llama.vocab_size", len(tokens))),
        "hidden_size": int(_field(reader, "llama.embedding_length")),
        "intermediate_size": int(_field(reader, "llama.feed_forward_length")),
        "num_hidden_layers": int(_field(reader, "llama.block_count")),
        "num_attention_heads": heads,
        "num_key_value_heads": int(_field(reader, "llama.attention.head_count_kv", heads)),
        "max_position_embeddings": int(_field(reader, "llama.context_length")),
        "rms_norm_eps": float(_field(reader, "llama.attention.layer_norm_rms_epsilon")),
        "rope_theta": float(_field(reader, "llama.rope.freq_base", 10000.0)),
        "hidden_act": "silu",
        "tie_word_embeddings": "output.weight" not in {t.name for t in reader.tensors},
        "bos_token_id": int(_field(reader, "tokenizer.ggml.bos_token_id")),
        "eos_token_id": int(_field(reader, "tokenizer.ggml.eos_token_id")),
        "pad_token_id": int(_field(reader, "tokenizer.ggml.padding_token_id", 0)),
        "torch_dtype": "float32",
    }


def tensors(reader, config: dict[str, Any]) -> dict[str, torch.Tensor]:
    """Every decoder tensor, dequantized, un-permuted, float32, under Hugging Face's names."""
    from gguf import dequantize  # late: only the conversion command needs the package

    heads, kv = config["num_attention_heads"], config["num_key_value_heads"]
    out: dict[str, torch.Tensor] = {}
    for t in reader.tensors:
        if t.name in _SKIPPED:
            continue
        if t.name in _TOP_NAMES:
            name = _TOP_NAMES[t.name]
        else:
            blk, index, rest = t.name.split(".", 2)
            if blk != "blk" or rest not in _LAYER_NAMES:
                raise ConfigError(f"The GGUF file holds an unexpected tensor {t.name!r}.")
            name = f"model.layers.{int(index)}.{_LAYER_NAMES[rest]}"
        w = dequantize(t.data, t.tensor_type).reshape(list(reversed(t.shape.tolist())))
        if t.name.endswith("attn_q.weight"):
            w = unpermute(w, heads)
        elif t.name.endswith("attn_k.weight"):
            w = unpermute(w, kv)
        out[name] = torch.from_numpy(np.array(w, dtype=np.float32))  # a writable copy
    return out


def tokenizer_json(reader, config: dict[str, Any]) -> str:
    """The file's byte-level BPE as a ``tokenizer.json`` with the input template
    ``<bos> $A <eos>`` (see the module doc)."""
    from tokenizers import AddedToken, Tokenizer, decoders, models, pre_tokenizers, processors

    tokens = _field(reader, "tokenizer.ggml.tokens")
    merges = _field(reader, "tokenizer.ggml.merges")
    kinds = _field(reader, "tokenizer.ggml.token_type")
    if _field(reader, "tokenizer.ggml.model") != "gpt2":
        raise ConfigError("Only a byte-level BPE ('gpt2') tokenizer is converted.")
    vocab = {t: i for i, t in enumerate(tokens)}
    tok = Tokenizer(models.BPE(vocab=vocab, merges=[tuple(m.split(" ", 1)) for m in merges]))
    tok.pre_tokenizer = pre_tokenizers.Sequence(
        [
            pre_tokenizers.Digits(individual_digits=True),
            pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=True),
        ]
    )
    tok.decoder = decoders.ByteLevel()
    specials = [t for t, k in zip(tokens, kinds, strict=True) if k == CONTROL]
    tok.add_special_tokens([AddedToken(t, special=True, normalized=False) for t in specials])
    bos, eos = tokens[config["bos_token_id"]], tokens[config["eos_token_id"]]
    tok.post_processor = processors.TemplateProcessing(
        single=f"{bos} $A {eos}",
        special_tokens=[(bos, config["bos_token_id"]), (eos, config["eos_token_id"])],
    )
    return tok.to_str()


def convert(gguf_file: str | Path, out: str | Path, source: dict[str, str]) -> Path:
    """Write the base folder of ``gguf_file`` into ``out`` (created; files replaced).
    ``source``: what to record of where the file came from (distribution, version, sha256)."""
    from gguf import GGUFReader  # late: only the conversion command needs the package

    reader = GGUFReader(str(gguf_file))
    config = read_config(reader)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    save_file(tensors(reader, config), str(out / WEIGHTS), metadata={"format": "pt"})
    (out / WEIGHTS).chmod(0o644)
    (out / "tokenizer.json").write_text(tokenizer_json(reader, config), encoding="utf-8")
    doc = {**config, "uq_converted_from": dict(source)}
    (out / "config.json").write_text(json.dumps(doc, indent=2) + "\n", encoding="utf-8")
    return out
