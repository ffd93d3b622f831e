"""GGUF -> base folder (uqlab.models.gguf_base), golden against transformers' own GGUF reader.

A tiny random Llama (grouped-query, two layers) is written here as a GGUF file the way
llama.cpp's converter writes one: Q4_1 / Q8_0 / F32 tensors, the query and key rows interleaved
for its rotary kernel, a byte-level BPE in the metadata. Converted by the lab and read by the
library's decoder, its last-token language-model logits equal those of
``AutoModelForCausalLM.from_pretrained(..., gguf_file=...)`` within 1e-4, and the tokenizer
gives transformers' ids. The real SmolLM2 base gets the same check on ten sentences when it is
installed (``python -m uqlab.bases install smollm2``; CI installs it)."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from uqcore.build import build_model
from uqcore.config import ModelConfig
from uqcore.exceptions import ConfigError
from uqcore.readers.decoder_weights import decoder_specials, load_hf_decoder, read_decoder_shape
from uqcore.text.wordpiece import WordPiece
from uqlab.bases import SOURCE, get_base
from uqlab.models.gguf_base import convert, unpermute

gguf = pytest.importorskip("gguf")
tf = pytest.importorskip("transformers")

HEADS, KV, D, FF, LAYERS = 4, 2, 64, 96, 2
SPECIALS = ["<|endoftext|>", "<|im_start|>", "<|im_end|>"]


def _byte_chars() -> list[str]:
    """GPT-2's byte -> printable character table (the byte-level BPE alphabet)."""
    keep = list(range(33, 127)) + list(range(161, 173)) + list(range(174, 256))
    chars, n = [], 0
    for b in range(256):
        if b in keep:
            chars.append(chr(b))
        else:
            chars.append(chr(256 + n))
            n += 1
    return chars


def _permute(w: np.ndarray, heads: int) -> np.ndarray:
    """llama.cpp's converter: rows (head, half, pair) -> (head, pair, half)."""
    return (
        w.reshape(heads, 2, w.shape[0] // heads // 2, *w.shape[1:]).swapaxes(1, 2).reshape(w.shape)
    )


@pytest.fixture(scope="module")
def tiny_gguf(tmp_path_factory):
    rng = np.random.default_rng(0)
    alphabet = _byte_chars()
    merges = ["Ġ t", "h e", "Ġt he", "a t", "c at"]
    tokens = SPECIALS + alphabet + [m.replace(" ", "") for m in merges]
    types = [3] * len(SPECIALS) + [1] * (len(tokens) - len(SPECIALS))
    vocab = len(tokens)
    path = tmp_path_factory.mktemp("gguf") / "tiny.gguf"
    w = gguf.GGUFWriter(str(path), "llama")
    w.add_block_count(LAYERS)
    w.add_context_length(128)
    w.add_embedding_length(D)
    w.add_feed_forward_length(FF)
    w.add_head_count(HEADS)
    w.add_head_count_kv(KV)
    w.add_rope_freq_base(10000.0)
    w.add_layer_norm_rms_eps(1e-5)
    w.add_vocab_size(vocab)
    w.add_rope_dimension_count(D // HEADS)
    w.add_tokenizer_model("gpt2")
    w.add_tokenizer_pre("smollm")
    w.add_token_list(tokens)
    w.add_token_merges(merges)
    w.add_token_types(types)
    w.add_bos_token_id(1)
    w.add_eos_token_id(2)
    w.add_pad_token_id(2)
    w.add_add_bos_token(False)
    q4 = gguf.GGMLQuantizationType.Q4_1

    def put(name, arr, qtype=q4):
        arr = arr.astype(np.float32)
        if qtype == gguf.GGMLQuantizationType.F32:
            w.add_tensor(name, arr)
        else:
            w.add_tensor(name, gguf.quants.quantize(arr, qtype), raw_dtype=qtype)

    dh = D // HEADS
    put("token_embd.weight", rng.normal(0, 0.5, (vocab, D)), gguf.GGMLQuantizationType.Q8_0)
    for i in range(LAYERS):
        put(f"blk.{i}.attn_q.weight", _permute(rng.normal(0, 0.3, (D, D)), HEADS))
        put(f"blk.{i}.attn_k.weight", _permute(rng.normal(0, 0.3, (KV * dh, D)), KV))
        put(f"blk.{i}.attn_v.weight", rng.normal(0, 0.3, (KV * dh, D)))
        put(f"blk.{i}.attn_output.weight", rng.normal(0, 0.3, (D, D)))
        put(f"blk.{i}.ffn_gate.weight", rng.normal(0, 0.3, (FF, D)))
        put(f"blk.{i}.ffn_up.weight", rng.normal(0, 0.3, (FF, D)))
        put(f"blk.{i}.ffn_down.weight", rng.normal(0, 0.3, (D, FF)))
        for norm in ("attn_norm", "ffn_norm"):
            put(f"blk.{i}.{norm}.weight", 1 + rng.normal(0, 0.1, D), gguf.GGMLQuantizationType.F32)
    put("output_norm.weight", 1 + rng.normal(0, 0.1, D), gguf.GGMLQuantizationType.F32)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    return path


def _ours(folder):
    shape = read_decoder_shape(folder)
    cfg = ModelConfig.from_dict({**shape, "family": "trans", "num_classes": 2})
    model = build_model(cfg)
    load_hf_decoder(model, folder)
    return model.float().eval()


def _lm_logits(model, ids: list[int]) -> torch.Tensor:
    ids_t = torch.tensor([ids])
    with torch.no_grad():
        out = model(ids_t, torch.ones_like(ids_t, dtype=torch.bool))
        return model.norm(out.features) @ model.embed.weight.T  # [1, V]: the tied LM head


def test_unpermute_undoes_the_converters_interleave():
    w = np.arange(8 * 3, dtype=np.float32).reshape(8, 3)
    assert np.array_equal(unpermute(_permute(w, 2), 2), w)
    assert not np.array_equal(_permute(w, 2), w)


def test_a_converted_gguf_equals_transformers_reading_of_it(tiny_gguf, tmp_path):
    folder = convert(tiny_gguf, tmp_path / "base", {"distribution": "test"})
    again = convert(tiny_gguf, tmp_path / "again", {"distribution": "test"})
    for name in ("model.safetensors", "tokenizer.json", "config.json"):  # deterministic
        assert (folder / name).read_bytes() == (again / name).read_bytes(), name
    ref = tf.AutoModelForCausalLM.from_pretrained(
        str(tiny_gguf.parent), gguf_file=tiny_gguf.name, dtype=torch.float32
    ).eval()
    ref_tok = tf.AutoTokenizer.from_pretrained(str(tiny_gguf.parent), gguf_file=tiny_gguf.name)
    ours = _ours(folder)
    tok = WordPiece.from_folder(folder, decoder_specials(folder))
    assert decoder_specials(folder) == (2, 1, 2, None)
    for text in ("the cat sat", "at the hat 42", "éclair ☕"):
        enc = tok.encode(text, 64)
        assert enc.ids[0] == 1 and enc.ids[-1] == 2  # <|im_start|> ... <|im_end|>
        assert enc.ids[1:-1] == ref_tok(text, add_special_tokens=False)["input_ids"], text
        with torch.no_grad():
            theirs = ref(torch.tensor([enc.ids])).logits[:, -1]
        assert float((_lm_logits(ours, enc.ids) - theirs).abs().max()) < 1e-4, text


def test_another_architecture_is_refused(tmp_path):
    path = tmp_path / "gpt2.gguf"
    w = gguf.GGUFWriter(str(path), "gpt2")
    w.add_block_count(1)
    w.write_header_to_file()
    w.write_kv_data_to_file()
    w.write_tensors_to_file()
    w.close()
    with pytest.raises(ConfigError, match="only 'llama'"):
        convert(path, tmp_path / "out", {})


TEN = [
    "The movie was great, wasn't it?",
    "Bill and Mary washed himself.",
    "I paid $12.50 for 3 tickets in 2024.",
    "this phone's battery dies in an hour",
    "A truly wonderful, heart-warming film.",
    "The more you eat, the fatter you get.",
    "Who do you think that left?",
    "Qu'est-ce que c'est ?",
    "Worst. Purchase. Ever!!!",
    "She sells sea shells by the sea shore.",
]


def test_the_smollm2_base_equals_transformers_reading_of_its_gguf():
    """Ten sentences through the installed SmolLM2 base and through transformers' reading of
    the GGUF file it was converted from (kept beside it): logits within 1e-4, the same ids."""
    base = get_base("smollm2")
    try:
        folder = base.path()
    except ConfigError:
        pytest.skip("the SmolLM2 base is not installed: python -m uqlab.bases install smollm2")
    gguf_path = folder / SOURCE  # the checked file it was converted from
    if not gguf_path.is_file():
        pytest.skip(f"{gguf_path.name} is missing: python -m uqlab.bases install smollm2")
    ref = tf.AutoModelForCausalLM.from_pretrained(
        str(gguf_path.parent), gguf_file=gguf_path.name, dtype=torch.float32
    ).eval()
    ref_tok = tf.AutoTokenizer.from_pretrained(str(gguf_path.parent), gguf_file=gguf_path.name)
    ours = _ours(folder)
    tok = base.tokenizer()
    worst = 0.0
    for text in TEN:
        enc = tok.encode(text, 128)
        assert enc.ids[1:-1] == ref_tok(text, add_special_tokens=False)["input_ids"], text
        with torch.no_grad():
            theirs = ref(torch.tensor([enc.ids])).logits[:, -1]
        worst = max(worst, float((_lm_logits(ours, enc.ids) - theirs).abs().max()))
    assert worst < 1e-4, worst
