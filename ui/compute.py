"""The numbers behind the pages: one sentence sampled T times with its maps, and Table 3 rows.

Plain functions of plain values returning numpy arrays, so Streamlit can cache them by value
(``ui.cached`` wraps them). Every sentence is sampled *alone* (batch of one): its samples then
depend only on (checkpoint, text, settings, T, seed), so the explorer, the Table 3 page and a
shared link show the same numbers for the same sentence.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import torch

from uqcore.checkpoint import Checkpoint
from uqcore.model import PAD_ID as PAD
from uqcore.sampling import Capture, sample
from uqcore.settings import SamplingSettings, resolve
from uqcore.stats import mutual_information, predictive_entropy, table3_stats

MAP_BUDGET = 96 * 2**20  # bytes of captured maps (fp16) kept per explored sentence


@dataclass(frozen=True)
class Overrides:
    """The sidebar's inference settings; None keeps the checkpoint's value."""

    tau1: float | None = None
    tau2: float | None = None
    noise: float | None = None
    bam: str | None = None
    em: int | None = None
    dropout: float | None = None

    @classmethod
    def from_view(cls, view) -> Overrides:
        """The overrides of a :class:`ui.state.ViewState` (the sidebar's settings)."""
        return cls(view.tau1, view.tau2, view.noise, view.bam, view.em, view.dropout)

    def key(self) -> tuple:
        """Plain values for cache keys (the fields in order); ``Overrides(*key)`` rebuilds it."""
        return dataclasses.astuple(self)

    def settings(self) -> SamplingSettings:
        return SamplingSettings(
            tau1=self.tau1, tau2=self.tau2, noise_scale=self.noise, bam_inference=self.bam,
            em_iterations=self.em, dropout=self.dropout,
        )  # fmt: skip


def encode(ck: Checkpoint, text: str):
    """``(Encoding, ids [1, L], mask [1, L])`` of one text with the checkpoint's vocabulary
    (raises InputError for an empty text or one without a known word)."""
    enc = ck.vocab.encode(text, ck.config.max_len)
    ids = torch.tensor([enc.ids])  # [1, L]
    return enc, ids, ids != PAD


def captured_samples(ck: Checkpoint, length: int, T: int) -> int:
    """How many samples keep their maps within ``MAP_BUDGET`` (at least 1)."""
    cfg = ck.config
    maps = 2 if cfg.family in ("bam", "probtrans") else 1  # posterior mean / before-EM too
    per_sample = 2 * cfg.n_layers * cfg.n_heads * length * length * maps
    return max(1, min(T, MAP_BUDGET // per_sample))


def explore(ck: Checkpoint, text: str, T: int, seed: int, ov: Overrides) -> dict:
    """Sample ``text`` T times; keep every layer's maps for the first ``captured`` samples.

    Raises :class:`uqcore.errors.UQError` (an empty text, no known word, a bad setting) with a
    message for the user. Returns plain numpy/python values:
    ``probs [T, C]``, ``tokens``, ``maps``: layer -> name -> ``[Tc, H, ...]`` (fp16 maps),
    ``members [T]`` (ensembles), ``probs_before_em [T, C]`` (Probabilistic Transformer), the
    resolved ``settings`` and ``seconds`` of computing.
    """
    started = time.perf_counter()
    cfg = ck.config
    enc, ids, mask = encode(ck, text)
    settings = ov.settings()
    fs = resolve(cfg, settings)  # validates the overrides (ConfigError with a message)
    keep = captured_samples(ck, len(enc.ids), T)
    capture = Capture(layers=tuple(range(cfg.n_layers)), max_samples=keep, kl=True)
    with torch.inference_mode():
        r = sample(ck.model, ids, mask, T=T, seed=seed, settings=settings, capture=capture)
        before_em = None
        if cfg.family == "probtrans" and fs.em_iterations > 0:
            no_em = SamplingSettings(**{**settings.__dict__, "em_iterations": 0})
            before_em = sample(ck.model, ids, mask, T=1, seed=seed, settings=no_em).probs
    maps: dict[int, dict[str, np.ndarray]] = {}
    for name in ("attention", "centroids", "prior", "posterior_mean", "attention_before_em",
                 "kl_per_head"):  # fmt: skip
        for layer, value in getattr(r, name).items():
            arr = value[:, 0].float().numpy()  # [Tc, H, ...] (batch of one)
            maps.setdefault(layer, {})[name] = arr.astype(np.float16) if arr.ndim >= 3 else arr
    return {
        "probs": r.probs[:, 0].numpy().astype(np.float64),  # [T, C]
        "tokens": list(enc.tokens),
        "unknown": list(enc.is_unknown),
        "n_dropped": enc.n_dropped,
        "captured": keep,
        "maps": maps,
        "members": None if r.members is None else r.members.numpy(),
        "probs_before_em": None if before_em is None else before_em[0, 0].numpy(),
        "stochastic": r.stochastic,
        "settings": {
            k: getattr(fs, k)
            for k in (
                "tau",
                "tau1",
                "tau2",
                "noise_scale",
                "bam_sample",
                "em_iterations",
                "dropout",
                "dropout_on",
                "hard",
            )
        },  # fmt: skip
        "seconds": time.perf_counter() - started,
    }


def summary(probs: np.ndarray, label: int | None) -> dict:
    """Table 3 statistics of one sentence (``probs [T, C]``) for its gold ``label`` (or, when
    unknown, for the class the mean prediction picks), plus entropy and mutual information."""
    mean = probs.mean(0)  # [C]
    target = int(mean.argmax()) if label is None else int(label)
    stats = table3_stats(probs[:, None, :], np.array([target]))
    return {
        "target": target,
        "predicted": int(mean.argmax()),
        "p_mean": float(stats.p_gold_mean[0]),
        "p_var": float(stats.p_gold_var[0]),
        "correct": int(stats.n_correct[0]),
        "T": int(stats.n_samples),
        "entropy": float(predictive_entropy(probs[:, None, :])[0]),
        "mi": float(mutual_information(probs[:, None, :])[0]),
    }


def running_mean(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean of ``p [T]`` after 1..T samples and its standard error (0 for the first)."""
    t = np.arange(1, p.size + 1)
    mean = np.cumsum(p) / t
    sq = np.cumsum(p * p) / t
    var = np.maximum(sq - mean * mean, 0.0) * t / np.maximum(t - 1, 1)
    return mean, np.sqrt(var / t)


def table3_record(
    probs_of: Callable[[str], np.ndarray], name: str, text: str, label: int | None, domain: str
) -> dict:
    """One Table 3 row: ``probs_of(text)`` gives the samples ``[T, C]``. A sentence the
    checkpoint cannot read (no known word, empty) gets an ``error`` instead of numbers."""
    record = {"domain": domain, "sentence": text, "gold": label, "checkpoint": name}
    try:
        s = summary(probs_of(text), label)
    except ValueError as exc:  # UQError: a message for the user
        return {**record, "error": str(exc)}
    return {**record, "p_mean": s["p_mean"], "p_var": s["p_var"], "correct": s["correct"],
            "T": s["T"], "predicted": s["predicted"], "entropy": s["entropy"], "mi": s["mi"],
            "error": ""}  # fmt: skip


def explore_probs(ck: Checkpoint, text: str, T: int, seed: int, ov: Overrides) -> np.ndarray:
    """Only the class probabilities ``[T, C]`` of :func:`explore` (no maps): the same numbers."""
    _, ids, mask = encode(ck, text)
    with torch.inference_mode():
        r = sample(ck.model, ids, mask, T=T, seed=seed, settings=ov.settings())
    return r.probs[:, 0].numpy().astype(np.float64)
