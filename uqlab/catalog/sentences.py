"""Out-of-domain reviews cut into sentences, so that a sentence-level task's out-of-domain
figure can be read with text length held fixed.

CR's in-domain texts are single sentences (most read 16-31 tokens); its out-of-domain set, 500
IMDB reviews, reads 64 tokens (cut) almost every time: no length bin holds 20 texts of both
sides, and every OOD AUROC there may measure length as much as domain. Cutting each review into
its sentences gives out-of-domain texts of the in-domain texts' form, which the evaluation then
draws to the in-domain length histogram (:func:`uqcore.inference.detection.length_matched`).

:func:`review_sentences` is the one rule (deterministic: same reviews and seed, same rows); a
task file asks for the result with ``"ood_matched": {"file": ..., "name": ...}``
(:mod:`uqlab.catalog.task_file`). A sentence keeps its review's label: the review's sentiment,
not always the sentence's (the figure it serves ranks domains and does not use labels).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

_BREAK = re.compile(r"<br\s*/?>", re.IGNORECASE)  # IMDB's line breaks, kept in its text
# a sentence ends at . ! or ? (closing quotes or brackets kept with it) before a space and a
# capital, a digit or an opening quote ("Dr. Who" is cut too: a rule, not a parser)
_END = re.compile(r"[.!?][\"')\]]*(?=\s+[A-Z0-9\"'(])")
MIN_WORDS = 4  # shorter pieces are mostly fragments ("Why?", "10/10.")
MAX_WORDS = 60  # longer ones are run-ons the splitter missed


def split_sentences(text: str) -> list[str]:
    """The sentences of ``text`` in order, line breaks made spaces, each stripped; pieces of
    fewer than :data:`MIN_WORDS` or more than :data:`MAX_WORDS` words left out."""
    flat = " ".join(_BREAK.sub(" ", text).split())
    cuts = [0, *(m.end() for m in _END.finditer(flat)), len(flat)]
    pieces = (flat[a:b].strip() for a, b in zip(cuts[:-1], cuts[1:], strict=True))
    return [p for p in pieces if MIN_WORDS <= len(p.split()) <= MAX_WORDS]


def review_sentences(
    texts: Sequence[str], labels: Sequence[int], per_review: int = 2, seed: int = 0
) -> tuple[tuple[str, ...], tuple[int, ...]]:
    """Up to ``per_review`` sentences of each review (:func:`split_sentences`), chosen at random
    by ``seed`` and kept in the review's order, each with its review's label; reviews in order.
    ``ValueError`` for a ``per_review`` below 1 or texts and labels of different lengths."""
    if isinstance(per_review, bool) or not isinstance(per_review, int) or per_review < 1:
        raise ValueError(f"per_review must be a positive integer, got {per_review!r}.")
    if len(texts) != len(labels):
        raise ValueError(f"{len(texts)} texts but {len(labels)} labels.")
    rng = np.random.default_rng(seed)
    out_texts: list[str] = []
    out_labels: list[int] = []
    for text, label in zip(texts, labels, strict=True):
        sentences = split_sentences(text)
        keep = np.sort(rng.permutation(len(sentences))[:per_review])  # [<= per_review]
        out_texts.extend(sentences[i] for i in keep)
        out_labels.extend(int(label) for _ in keep)
    return tuple(out_texts), tuple(out_labels)
