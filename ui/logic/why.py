"""Why is the model unsure? Salience over the samples, occlusion, edits: computed here from a
checkpoint and a text, returned as plain numpy records for the page (no Streamlit here).

Every number depends only on (checkpoint, text, settings, T, seed) and the view's own choices
(explained class, method, steps): the library keys every random draw by the text's tokens and
the sample number (:mod:`uqcore.nets.noise`), so the salience of sample t explains exactly the
sample t the explorer shows, and an occluded text's samples are the explorer's for that text.
"""

from __future__ import annotations

import difflib
import time
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from ui.logic import estimate
from uqcore.checkpoint import Checkpoint
from uqcore.inference.salience import attribute
from uqcore.nets.model import PAD_ID
from uqcore.settings import SamplingSettings, resolve
from uqcore.stats import mutual_information
from uqcore.text.vocab import Encoding
from uqlab.workbench.compute import encode

METHOD_TITLES = {
    "gradient_x_input": "gradient × input",
    "integrated_gradients": "integrated gradients",
}
MAX_OCCLUDED = 40  # words removed one at a time per view (a window of a longer text)


@dataclass(frozen=True)
class Attribution:
    """One text's attributions (:class:`uqcore.inference.salience.Salience` as numpy): ``prob [T,
    L]`` of each sample's p(target); ``mi [L]`` of the T samples' mutual information (None: the
    samples are all the same); ``probs [T, C]``; completeness gaps ``prob_gap [T]`` and
    ``mi_gap`` (integrated gradients); ``tokens`` of the text as the explorer shows them."""

    method: str
    steps: int
    target: int
    tokens: list[str]
    prob: np.ndarray
    mi: np.ndarray | None
    probs: np.ndarray
    mi_value: float
    stochastic: bool
    straight_through: bool
    seconds: float
    prob_gap: np.ndarray | None = None
    mi_gap: float | None = None
    mi_base: float | None = None
    base_probs: np.ndarray | None = None
    members: np.ndarray | None = None
    held: tuple[bool, ...] = ()  # positions kept at their own embedding ([CLS], [SEP])

    @property
    def T(self) -> int:  # the paper's name
        return self.prob.shape[0]

    def table(self) -> pd.DataFrame:
        """One row per token but the held ones ([CLS]/[SEP]): its mean attribution over the
        samples, their standard deviation, the share of samples in which it is the most positive
        token, the share in which its sign is the mean's (agreement), and its
        mutual-information attribution."""
        keep = [i for i in range(len(self.tokens)) if not (self.held and self.held[i])]
        a = self.prob[:, keep]  # [T, K]
        top = np.bincount(a.argmax(1), minlength=len(keep)) / len(a)  # [K]
        mean = a.mean(0)
        agree = (np.sign(a) == np.sign(mean)[None]).mean(0)
        out = pd.DataFrame(
            {
                "position": keep,
                "token": [self.tokens[i] for i in keep],
                "mean": mean,
                "std": a.std(0),
                "top share": top,
                "sign agreement": agree,
            }
        )
        if self.mi is not None:
            out["MI attribution"] = self.mi[keep]
        return out


def _hold(ck: Checkpoint, enc: Encoding) -> torch.Tensor:
    """Positions kept at their own embedding: the tokens the tokenizer's template adds
    ([CLS] / [SEP], <s> / </s>, a decoder's opening and closing tokens; none for GPT-2), a
    label-word prompt's pieces (counted per text: ``enc.held``), or the word-level [CLS]."""
    ids = enc.ids
    hold = torch.zeros(len(ids), dtype=torch.bool)
    before, after = enc.held or getattr(ck.vocab, "held", (1, 0))
    hold[:before] = True
    if after:
        hold[len(ids) - after :] = True
    return hold


def salience(
    ck: Checkpoint,
    text: str,
    T: int,
    seed: int,
    overrides: SamplingSettings,
    target: int,
    method: str,
    steps: int,
    temperature: float | None = None,
    progress=None,
    timings: estimate.Timings | None = estimate.RECENT,
) -> Attribution:
    """Attributions of ``text``'s T samples (:func:`uqcore.inference.salience.attribute`) at the
    explorer's settings. Its measured time goes to ``timings`` (None: nowhere) under
    :func:`salience_kind`, sized by :func:`salience_size`, for the next run's estimate. Raises
    UQError with a message for the user."""
    started = time.perf_counter()
    enc, ids, mask = encode(ck, text)
    fs = resolve(ck.config, overrides)
    hold = _hold(ck, enc)
    s = attribute(
        ck.model,
        ids,
        mask,
        T,
        seed,
        target,
        settings=fs,
        method=method,
        steps=steps,
        baseline_id=getattr(ck.vocab, "pad_id", PAD_ID),
        hold=hold.to(ids.device),
        temperature=temperature,
        progress=progress,
    )

    def arr(x):
        return None if x is None else x.detach().double().cpu().numpy()

    got = Attribution(
        method=s.method,
        steps=s.steps,
        target=target,
        tokens=list(enc.tokens),
        prob=arr(s.prob),
        mi=arr(s.mi),
        probs=arr(s.probs),
        mi_value=s.mi_value,
        stochastic=s.stochastic,
        straight_through=s.straight_through,
        seconds=time.perf_counter() - started,
        prob_gap=arr(s.prob_gap),
        mi_gap=s.mi_gap,
        mi_base=s.mi_base,
        base_probs=arr(s.base_probs),
        members=arr(s.members),
        held=tuple(bool(h) for h in hold),
    )
    if timings is not None:
        size = salience_size(T, got.steps, method, len(got.tokens), got.stochastic, got.members)
        timings.record(salience_kind(ck.path.name, method), got.seconds, size)
    return got


def salience_kind(name: str, method: str) -> tuple[str, str, str]:
    """The kind of work a salience run of checkpoint ``name`` with ``method`` is, for
    :mod:`ui.logic.estimate` (its rate differs between models and between methods)."""
    return ("salience", name, method)


def salience_size(
    T: int,
    steps: int,
    method: str,
    tokens: int,
    stochastic: bool,
    members: np.ndarray | None,
) -> int:
    """The work of a salience run, in rows x tokens: each path point (``steps`` of integrated
    gradients and its two ends, or the one point of gradient x input and its end) runs one row
    per sample, per ensemble member, or just one when every sample is the same
    (:func:`uqcore.inference.salience.attribute`)."""
    if members is not None:
        rows = int(np.max(members)) + 1
    else:
        rows = T if stochastic else 1
    points = steps + 2 if method == "integrated_gradients" else 2
    return rows * points * max(1, tokens)


def attribution_bytes(a: Attribution) -> int:
    return sum(
        x.nbytes
        for x in (a.prob, a.mi, a.probs, a.prob_gap, a.base_probs)
        if isinstance(x, np.ndarray)
    ) + 64 * len(a.tokens)


def occlusion_window(n_words: int, start: int) -> tuple[int, int]:
    """``(lo, hi)`` of the words removed one at a time: all of them up to
    :data:`MAX_OCCLUDED`, else a window from ``start``."""
    if n_words <= MAX_OCCLUDED:
        return 0, n_words
    lo = max(0, min(int(start), n_words - MAX_OCCLUDED))
    return lo, lo + MAX_OCCLUDED


def occluded_texts(text: str, lo: int, hi: int) -> list[str]:
    """The text with word ``i`` (split on white space) removed, for ``i`` in ``[lo, hi)``."""
    words = text.split()
    return [" ".join(words[:i] + words[i + 1 :]) for i in range(lo, hi)]


def occlusion(text: str, probs: np.ndarray, sampler, target: int, lo: int, hi: int) -> pd.DataFrame:
    """The shift of mean p(target) and of the mutual information when each word of ``[lo,
    hi)`` is removed, against the text's own samples ``probs [T, C]``. ``sampler(texts)`` gives
    each text's ``probs [T, C]`` (or a message) in one batched call (:func:`ui.cached.sampler`):
    the same samples the explorer draws for that text. ``se``: the Monte Carlo standard error
    of the shift of the mean (the two texts' samples are independent draws)."""
    words = text.split()
    variants = occluded_texts(text, lo, hi)
    got = sampler(tuple(variants))
    T = probs.shape[0]
    base_p, base_mi = probs[:, target].mean(), float(mutual_information(probs[:, None])[0])
    rows = []
    for i, (variant, g) in zip(range(lo, hi), zip(variants, got, strict=True), strict=True):
        if isinstance(g, str) or not variant.strip():
            rows.append(
                {
                    "position": i,
                    "word": words[i],
                    "p without": np.nan,
                    "shift of p": np.nan,
                    "se": np.nan,
                    "MI without": np.nan,
                    "shift of MI": np.nan,
                    "note": g if isinstance(g, str) and g else "nothing left",
                }
            )
            continue
        p = g.probs[:, target]
        mi = float(mutual_information(g.probs[:, None])[0])
        se = float(np.sqrt(probs[:, target].var(ddof=1) / T + p.var(ddof=1) / T)) if T > 1 else 0.0
        rows.append(
            {
                "position": i,
                "word": words[i],
                "p without": p.mean(),
                "shift of p": p.mean() - base_p,
                "se": se,
                "MI without": mi,
                "shift of MI": mi - base_mi,
                "note": "",
            }
        )
    return pd.DataFrame(rows)


def aligned(tokens_a: list[str], tokens_b: list[str]) -> list[tuple[int, int]]:
    """Pairs ``(i, j)`` of positions holding the same token in both texts, in order (difflib's
    longest matching blocks): where two attention maps can be compared."""
    matcher = difflib.SequenceMatcher(a=tokens_a, b=tokens_b, autojunk=False)
    blocks = matcher.get_matching_blocks()
    return [(blk.a + k, blk.b + k) for blk in blocks for k in range(blk.size)]


def attention_difference(mean_a: np.ndarray, mean_b: np.ndarray, pairs) -> np.ndarray:
    """``B - A`` of two mean attention maps ``[La, La]`` / ``[Lb, Lb]`` on the aligned
    positions ``pairs`` -> ``[K, K]`` (query rows, key columns of the tokens both share)."""
    ia = np.array([i for i, _ in pairs])
    ib = np.array([j for _, j in pairs])
    return mean_b[np.ix_(ib, ib)] - mean_a[np.ix_(ia, ia)]
