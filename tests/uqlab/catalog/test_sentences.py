"""Out-of-domain reviews cut into sentences (uqlab.catalog.sentences) and the bundled set made of
them (assets/eval/imdb_sentences.parquet): the same rows from the same command, each sentence a
piece of its review, and CR's sentences and these drawn to one length histogram bin by bin with
hundreds a side where the whole reviews leave a handful (issue 47)."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from uqcore.inference.detection import length_matched, matching_edges
from uqlab.catalog.sentences import MAX_WORDS, MIN_WORDS, review_sentences, split_sentences
from uqlab.data import SENTENCE_SETS, export_sentences, load_eval_subset, main

EVAL = Path(__file__).resolve().parents[3] / "assets" / "eval"


def _column(stem: str, name: str = "text") -> list:
    return pq.read_table(EVAL / f"{stem}.parquet")[name].to_pylist()


def test_a_review_is_cut_at_sentence_ends_and_line_breaks():
    text = (
        'Great cast.<br /><br />The plot, however, "was thin." I left at the break! '
        "Would I go again? No. Sci-fi fans may like it (said my friend) 2 times over."
    )
    got = split_sentences(text)
    assert got == [
        'The plot, however, "was thin."',
        "I left at the break!",
        "Would I go again?",
        "Sci-fi fans may like it (said my friend) 2 times over.",
    ]  # "Great cast." and "No." are under MIN_WORDS words
    assert all(MIN_WORDS <= len(s.split()) <= MAX_WORDS for s in got)
    assert split_sentences("") == [] and split_sentences("<br />" * 5) == []


def test_the_choice_is_seeded_in_review_order_with_the_reviews_label():
    reviews = [f"First one {i} here. Second one {i} here. Third one {i} here." for i in range(20)]
    labels = [i % 2 for i in range(20)]
    texts, got = review_sentences(reviews, labels, per_review=2, seed=3)
    assert (texts, got) == review_sentences(reviews, labels, per_review=2, seed=3)
    assert texts != review_sentences(reviews, labels, per_review=2, seed=4)[0]
    assert len(texts) == 40 and got == tuple(y for y in labels for _ in range(2))
    for i in range(20):
        a, b = texts[2 * i : 2 * i + 2]
        assert f" {i} " in a and f" {i} " in b and reviews[i].index(a) < reviews[i].index(b)
    with pytest.raises(ValueError, match="per_review"):
        review_sentences(reviews, labels, per_review=0)
    with pytest.raises(ValueError, match="labels"):
        review_sentences(reviews, labels[:3])


def test_the_bundled_sentences_are_the_commands_and_pieces_of_the_bundled_reviews(tmp_path):
    for source in SENTENCE_SETS:
        shutil.copy(EVAL / f"{source}.parquet", tmp_path)
    assert main(["export-sentences", "--eval-dir", str(tmp_path)]) == 0
    for stem in SENTENCE_SETS.values():
        made = pq.read_table(tmp_path / f"{stem}.parquet")
        assert made.equals(pq.read_table(EVAL / f"{stem}.parquet"))  # rerun: the same rows
        assert set(made["domain"].to_pylist()) == {"ood"}
    assert export_sentences(tmp_path) == {"imdb_sentences": 977}
    reviews = load_eval_subset("imdb_test_sample")
    flat = [" ".join(r.replace("<br />", " ").split()) for r in reviews.texts]
    texts, labels = _column("imdb_sentences"), _column("imdb_sentences", "label")
    start = 0
    for sentence, label in zip(texts, labels, strict=True):  # in review order, from its review
        while sentence not in flat[start]:
            start += 1
        assert label == reviews.labels[start]


def test_cr_and_the_sentences_share_one_length_histogram_bin_by_bin():
    """Word counts (each tokenizer is tested where it is used): the whole reviews leave 13 texts
    a side at equal length, the sentences 491, and the two kept sets agree in every bin."""
    cr = [min(len(t.split()), 64) for t in _column("cr_test")]
    edges = matching_edges(64)
    sentences = [min(len(t.split()), 64) for t in _column("imdb_sentences")]
    reviews = [min(len(t.split()), 64) for t in _column("imdb_test_sample")]
    kept = length_matched(cr, sentences, edges, seed=0)
    assert length_matched(cr, reviews, edges, seed=0).n == 13 and kept.n == 491
    ours = np.histogram(np.take(cr, kept.id_rows), edges)[0]
    theirs = np.histogram(np.take(sentences, kept.ood_rows), edges)[0]
    assert ours.tolist() == theirs.tolist() == kept.per_bin
