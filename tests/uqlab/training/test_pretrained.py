"""MiniLM-derived input vectors: BERT's WordPiece algorithm and the PCA-reduced table."""

from __future__ import annotations

import pytest
import torch

from uqlab.training.pretrained import basic_split, word_vectors, wordpiece

VOCAB = {"[UNK]": 0, "un": 1, "##aff": 2, "##able": 3, "aff": 4, "a": 5}


def test_wordpiece_takes_the_longest_pieces_first():
    assert wordpiece("unaffable", VOCAB, 0) == [1, 2, 3]
    assert wordpiece("affable", VOCAB, 0) == [4, 3]
    assert wordpiece("unxyz", VOCAB, 0) == [0]  # one unmatched rest makes the word unknown
    assert wordpiece("a" * 101, VOCAB, 0) == [0]


def test_basic_split_strips_accents_and_splits_punctuation():
    assert basic_split("don't") == ["don", "'", "t"]
    assert basic_split("café") == ["cafe"]
    assert basic_split("well-known!") == ["well", "-", "known", "!"]


def test_word_vectors_are_deterministic_reduced_and_scaled():
    words = ["the", "cat", "dog", "ran", "quickly", "unbelievable", "zzqqxx", "😀", "don't"]
    a, covered = word_vectors(words, 4)
    b, _ = word_vectors(words, 4)
    assert a.shape == (len(words), 4) and torch.equal(a, b)
    assert a.std().item() == pytest.approx(1.0, rel=1e-4)
    assert 0.5 < covered < 1.0  # the emoji has no WordPiece: [UNK]
    # related words lie closer than unrelated ones in the reduced space
    full, _ = word_vectors(["cat", "dog", "quickly"] + words, 8)
    cos = torch.nn.functional.cosine_similarity
    assert cos(full[0], full[1], dim=0) > cos(full[0], full[2], dim=0)
