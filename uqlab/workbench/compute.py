"""The numbers behind the pages: one sentence sampled T times with its maps, and Table 3 rows.

Plain functions of plain values returning numpy arrays, so Streamlit can cache them by value
(``ui.cached`` wraps them). A sentence's samples depend only on (checkpoint, text, settings, T,
seed): the library keys every random draw by the sentence's own tokens, so the dataset pages,
which sample many sentences in length-sorted batches (:func:`many_probs`), show for each one
the numbers the explorer shows for it alone (within float rounding of batched matmuls).
"""

from __future__ import annotations

import dataclasses
import sys
import time
from dataclasses import dataclass

import numpy as np
import torch

from uqcore.backbones import get_backbone
from uqcore.checkpoint import Checkpoint
from uqcore.exceptions import UQError
from uqcore.inference.batch_predict import predict_grid_ids, predict_ids
from uqcore.inference.sampling import Capture, sample
from uqcore.lru import ByteLRU
from uqcore.nets.maps import LayerMaps
from uqcore.runtime import model_device
from uqcore.settings import ForwardSettings, SamplingSettings, resolve
from uqcore.stats import mutual_information, predictive_entropy, scaled_probs, table3_stats

EXPLORE_T = 50  # the explorer's default T
MAP_BUDGET = 32 * 2**20  # bytes of captured maps (fp16) kept per explored sentence


@dataclass(frozen=True)
class Sampled:
    """One text's samples at dataset scale: ``probs [T, C]`` and the ``logits [T, C]`` they
    came from (for logit-based OOD scores)."""

    probs: np.ndarray
    logits: np.ndarray


@dataclass(frozen=True)
class Summary:
    """Table 3 statistics of one sentence for a ``target`` class (the gold label, or the class
    the mean prediction picks when none is given), plus entropy and mutual information (nats)."""

    target: int
    predicted: int
    p_mean: float
    p_var: float
    correct: int
    T: int  # the paper's name
    entropy: float
    mi: float

    @classmethod
    def of_row(cls, row) -> Summary:
        """The summary of one row of :func:`uqlab.workbench.dataset.frame` (scored against its gold
        label)."""
        return cls(
            int(row["gold"]),
            int(row["pred"]),
            float(row["p_gold"]),
            float(row["var_gold"]),
            int(row["correct"]),
            int(row["T"]),
            float(row["entropy"]),
            float(row["mi"]),
        )


@dataclass(frozen=True)
class ExploreResult:
    """One sentence sampled T times, as the explorer shows it (plain numpy values).

    ``probs [T, C]``; ``tokens`` with ``unknown`` flags, ``n_used`` of the text's tokens read and
    ``n_dropped`` cut at the model's length; ``maps``: layer ->
    :class:`uqcore.nets.maps.LayerMaps` of fp16 arrays ``[Tc, H, ...]`` for the first ``captured``
    samples (``kl_per_head`` ``[Tc, H]`` float32);
    ``members [T]`` (ensembles); ``probs_before_em [C]`` (the first sample without EM, when the
    family adapts keys); ``settings``: the resolved settings it ran with; ``text`` and ``seed``:
    what was sampled; ``summary``: the
    Table 3 numbers for ``label`` (None until :meth:`for_label`); ``seconds`` of computing;
    ``key``: the plain values that determine the result (checkpoint and its files' version, text,
    T, seed, settings, temperature), set by :func:`ui.cached.explore` so its figures are
    cached across sessions (None: figures are built every time); ``family``: the checkpoint's
    model family (a :data:`uqcore.families.FAMILIES` name; "" when unknown).
    """

    probs: np.ndarray
    tokens: list[str]
    unknown: list[bool]
    n_used: int
    n_dropped: int
    captured: int
    maps: dict[int, LayerMaps]
    members: np.ndarray | None
    probs_before_em: np.ndarray | None
    stochastic: bool
    settings: ForwardSettings
    seconds: float
    text: str = ""
    seed: int = 0
    logits: np.ndarray | None = None  # [T, C]
    temperature: float | None = None  # set by with_temperature
    summary: Summary | None = None
    key: tuple | None = None  # what determines it, for the figure cache (ui.cached.explore)
    family: str = ""  # the checkpoint's family (what one sample is: FamilySpec.sample_is)
    causal: bool = False  # a decoder: a query never reads a later key (hidden, not zero)
    read_len: int = 0  # the tokens the text was read at (longer than trained_len: "whole")
    trained_len: int = 0  # the checkpoint's training length

    def with_temperature(self, t: float) -> ExploreResult:
        """This result with every sample's logits divided by ``t`` before its softmax
        (temperature scaling): calibrated probabilities, the same predicted class per sample."""
        probs = scaled_probs(self.logits[:, None, :], t)[:, 0]  # [T, C]
        return dataclasses.replace(self, probs=probs, temperature=t, summary=None, key=None)

    def for_label(self, label: int | None) -> ExploreResult:
        """This result with its Table 3 summary for the gold ``label`` (None = unknown)."""
        return dataclasses.replace(self, summary=summary(self.probs, label))


def result_bytes(res: ExploreResult) -> int:
    """Bytes of the arrays an :class:`ExploreResult` holds (its maps above all)."""
    arrays = [res.probs, res.logits, res.members, res.probs_before_em]
    arrays += [value for maps in res.maps.values() for _, value in maps.items()]
    return sum(a.nbytes for a in arrays if isinstance(a, np.ndarray))


def spec_bytes(value) -> int:
    """Bytes a cached figure (its plotly JSON: dicts, lists, strings, numbers and numpy arrays,
    or a tuple of those) holds, about: each array's memory (its base's, once, for a view), each
    string's and container's ``sys.getsizeof``."""
    seen: set[int] = set()
    total = 0
    stack = [value]
    while stack:
        v = stack.pop()
        if isinstance(v, np.ndarray):
            base = v if v.base is None else v.base
            if id(base) not in seen:
                seen.add(id(base))
                total += getattr(base, "nbytes", v.nbytes) + 112
        elif isinstance(v, dict):
            total += sys.getsizeof(v)
            stack.extend(v.keys())
            stack.extend(v.values())
        elif isinstance(v, list | tuple):
            total += sys.getsizeof(v)
            stack.extend(v)
        else:
            total += sys.getsizeof(v)
    return total


def reading(ck: Checkpoint, whole: bool = False) -> int:
    """The tokens a text is read at: the checkpoint's training length (:attr:`Checkpoint.
    read_len`), or with ``whole`` its position table (longer than it was trained: labelled so
    wherever it is shown)."""
    return ck.config.max_len if whole else ck.read_len


def encode(ck: Checkpoint, text: str, whole: bool = False):
    """``(Encoding, ids [1, L], mask [1, L])`` of one text with the checkpoint's vocabulary, at
    :func:`reading` (raises InputError for an empty text or one without a known word)."""
    enc = ck.vocab.encode(text, reading(ck, whole))
    ids = torch.tensor([enc.ids], device=model_device(ck.model))  # [1, L]
    return enc, ids, torch.ones_like(ids, dtype=torch.bool)  # one text: no padding


def captured_samples(ck: Checkpoint, length: int, T: int) -> int:
    """How many samples keep their maps within ``MAP_BUDGET`` (at least 1)."""
    cfg = ck.config
    square = sum(1 for name in cfg.spec.maps if name in ("posterior_mean", "attention_before_em"))
    per_sample = 2 * cfg.n_layers * cfg.n_heads * length * length * (1 + square)
    return max(1, min(T, MAP_BUDGET // per_sample))


def hide_future(maps: np.ndarray, causal: bool) -> np.ndarray:
    """``maps [..., W, W]`` (a window of the same tokens on both axes) as float32, with the
    cells a causal model never computes (key after query) set to NaN, so a figure leaves them
    empty instead of drawing them as zero weights; unchanged for an encoder."""
    out = np.asarray(maps, dtype=np.float32)
    if not causal:
        return out
    later = np.triu(np.ones(out.shape[-2:], dtype=bool), 1)  # [W, W]
    return np.where(later, np.float32(np.nan), out)


def _to_numpy(name: str, value: torch.Tensor) -> np.ndarray:
    arr = value[:, 0].float().cpu().numpy()  # [Tc, H, ...] (batch of one)
    return arr.astype(np.float16) if arr.ndim >= 3 else arr


def explore(
    ck: Checkpoint, text: str, T: int, seed: int, overrides: SamplingSettings, whole: bool = False
):
    """Sample ``text`` T times; keep every layer's maps for the first ``captured`` samples.
    ``whole``: read past the training length, up to the position table (:func:`reading`).

    Raises :class:`uqcore.exceptions.UQError` (an empty text, no known word, a bad setting) with a
    message for the user. The settings are resolved once, here, and the sampler runs with them.
    Returns an :class:`ExploreResult` without its summary (see :meth:`ExploreResult.for_label`).
    """
    started = time.perf_counter()
    cfg = ck.config
    enc, ids, mask = encode(ck, text, whole)
    fs = resolve(cfg, overrides)  # validates the overrides (ConfigError with a message)
    keep = captured_samples(ck, len(enc.ids), T)
    capture = Capture(layers=tuple(range(cfg.n_layers)), max_samples=keep, kl=True)
    with torch.inference_mode():
        r = sample(ck.model, ids, mask, T=T, seed=seed, settings=fs, capture=capture)
        before_em = None
        if cfg.spec.needs_every_query(fs):  # EM adapts the keys: the same sample without it
            no_em = dataclasses.replace(fs, em_iterations=0)
            before_em = sample(ck.model, ids, mask, T=1, seed=seed, settings=no_em).probs
    return ExploreResult(
        probs=r.probs[:, 0].cpu().numpy().astype(np.float64),  # [T, C]
        tokens=list(enc.tokens),
        unknown=list(enc.is_unknown),
        n_used=enc.n_words - enc.n_dropped,
        n_dropped=enc.n_dropped,
        captured=keep,
        maps={layer: m.map(_to_numpy) for layer, m in r.maps.items()},
        members=None if r.members is None else r.members.cpu().numpy(),
        probs_before_em=None if before_em is None else before_em[0, 0].cpu().numpy(),
        stochastic=r.stochastic,
        settings=r.settings,
        seconds=time.perf_counter() - started,
        text=text,
        seed=seed,
        logits=r.logits[:, 0].cpu().numpy().astype(np.float64),
        family=cfg.family,
        causal=get_backbone(cfg.backbone).classifier == "decoder",
        read_len=reading(ck, whole),
        trained_len=ck.read_len,
    )


def summary(probs: np.ndarray, label: int | None) -> Summary:
    """Table 3 statistics of one sentence (``probs [T, C]``) for its gold ``label`` (or, when
    unknown, for the class the mean prediction picks), plus entropy and mutual information."""
    mean = probs.mean(0)  # [C]
    target = int(mean.argmax()) if label is None else int(label)
    stats = table3_stats(probs[:, None, :], np.array([target]))
    return Summary(
        target=target,
        predicted=int(mean.argmax()),
        p_mean=float(stats.p_gold_mean[0]),
        p_var=float(stats.p_gold_var[0]),
        correct=int(stats.n_correct[0]),
        T=int(stats.n_samples),
        entropy=float(predictive_entropy(probs[:, None, :])[0]),
        mi=float(mutual_information(probs[:, None, :])[0]),
    )


def running_mean(p: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean of ``p [T]`` after 1..T samples and its standard error (0 for the first)."""
    t = np.arange(1, p.size + 1)
    mean = np.cumsum(p) / t
    sq = np.cumsum(p * p) / t
    var = np.maximum(sq - mean * mean, 0.0) * t / np.maximum(t - 1, 1)
    return mean, np.sqrt(var / t)


def identical(samples: np.ndarray) -> bool:
    """Whether every sample of ``samples [Tc, ...]`` (first axis: the samples) equals the first,
    exactly (True for one sample): then a sample picker or a spread over them shows nothing."""
    return bool((samples == samples[:1]).all())


PRIOR_TOLERANCE = 0.2  # a prior within 20 % of an equal share on every key reads as uniform


def uniform_prior(prior: np.ndarray, tolerance: float = PRIOR_TOLERANCE) -> bool:
    """Whether a BAM prior ``prior [H, n]`` (each head's prior over the text's n real keys) is
    (nearly) uniform: the largest relative distance of a key's share from an equal one,
    ``max_k |n * prior[h, k] - 1|``, averaged over the heads, is below ``tolerance``.

    Relative, not absolute: ``1 / n`` shrinks with the text's length, so an absolute tolerance
    calls every long text's prior uniform. 0.2 separates the shipped checkpoints: cola-bam's
    prior (flat, about 1/n each) scores 0.02 to 0.1 in every layer, cola-minilm-bam's (learned)
    about 0.38 on short and long texts alike."""
    prior = np.asarray(prior, dtype=np.float64)
    n = prior.shape[-1]
    return bool(np.abs(n * prior - 1.0).max(-1).mean() < tolerance)


def table3_record(
    sampled: Sampled | str, name: str, text: str, label: int | None, domain: str
) -> dict:
    """One Table 3 row from the samples of ``text``; a sentence the checkpoint cannot read
    (``sampled`` is then the message why) gets an ``error`` instead of numbers."""
    record = {"domain": domain, "sentence": text, "gold": label, "checkpoint": name}
    if isinstance(sampled, str):
        return {**record, "error": sampled}
    s = summary(sampled.probs, label)
    return {
        **record,
        "p_mean": s.p_mean,
        "p_var": s.p_var,
        "correct": s.correct,
        "T": s.T,
        "predicted": s.predicted,
        "entropy": s.entropy,
        "mi": s.mi,
        "error": "",
    }


def from_logits(logits: np.ndarray) -> Sampled:
    """A text's samples from its ``logits [T, C]`` (float64 softmax, as the sampler's)."""
    z = np.exp(logits - logits.max(-1, keepdims=True))  # [T, C]
    return Sampled(z / z.sum(-1, keepdims=True), np.asarray(logits, dtype=np.float64))


def stored_probs(stored, texts: tuple[str, ...], T: int) -> list[Sampled | None]:
    """Each text's samples read from ``stored`` (:class:`uqlab.evaluation.stored.StoredSamples`
    whose seed and settings were checked with ``matches``), or None where it holds none with T
    samples."""
    out: list[Sampled | None] = []
    for text in texts:
        got = stored.get(text, T)
        out.append(None if got is None else from_logits(got))
    return out


ENCODED_BYTES = 32 * 2**20  # token ids of the texts many_probs read (a review: ~3 KB)
_ENCODED: ByteLRU[tuple[tuple[int, ...], int]] = ByteLRU(ENCODED_BYTES, lambda kept: kept[1])


def _token_ids(ck: Checkpoint, text: str, owner) -> tuple[int, ...] | list[int]:
    """``text``'s token ids under ``ck``'s vocabulary, kept per ``(owner, text)`` when the
    caller names what identifies the checkpoint (``owner``): a dataset page reruns every
    bundled text at each knob change. Raises the vocabulary's :class:`UQError` (not kept)."""
    if owner is None:
        return ck.vocab.encode(text, ck.read_len).ids

    def load() -> tuple[tuple[int, ...], int]:
        ids = tuple(ck.vocab.encode(text, ck.read_len).ids)
        return ids, 8 * len(ids) + len(text) + 200  # ids, the key's text, the entry

    return _ENCODED.get((owner, ck.read_len, text), load)[0]


def _encoded(ck: Checkpoint, texts: tuple[str, ...], owner) -> tuple[list, dict[int, list[int]]]:
    """``texts``' token ids by index, and for each text that cannot be read (an empty text, no
    known word) the message why, at its place in a list of ``len(texts)`` ("" elsewhere)."""
    out: list[Sampled | str] = [""] * len(texts)
    encoded: dict[int, list[int]] = {}
    for i, text in enumerate(texts):
        try:
            encoded[i] = _token_ids(ck, text, owner)
        except UQError as exc:
            out[i] = str(exc)
    return out, encoded


def _per_text(probs: torch.Tensor, logits: torch.Tensor) -> list[Sampled]:
    """Each text's samples of ``probs`` / ``logits [T, N, C]`` as float64 arrays ``[T, C]``,
    converted once for all texts (one conversion a text cost the temperature sweep 1,200
    tensor-to-numpy calls and 2,400 indexings of a tensor)."""
    p, z = probs.numpy().transpose(1, 0, 2), logits.numpy().transpose(1, 0, 2)  # [N, T, C] views
    return [Sampled(p[j].astype(np.float64), z[j].astype(np.float64)) for j in range(len(p))]


def many_probs(
    ck: Checkpoint,
    texts: tuple[str, ...],
    T: int,
    seed: int,
    overrides: SamplingSettings,
    prefix_cache=None,
    owner=None,
    bar=None,
) -> list[Sampled | str]:
    """The samples of every text, in batches of similar length: for each text the
    ``probs [T, C]`` that :func:`explore` gives it alone (and their logits), or the message of
    why it cannot be read (an empty text, no known word) while the others are computed.
    ``prefix_cache`` / ``owner``: the layers below the noise kept across calls
    (:mod:`uqcore.inference.prefix`); ``bar``: told ``update(n)`` after each batch of ``n``
    texts."""
    fs = resolve(ck.config, overrides)  # ConfigError for a bad setting: nothing to compute
    out, encoded = _encoded(ck, texts, owner)
    if encoded:
        with torch.inference_mode():  # length-sorted batches (uqcore.inference.batch_predict)
            probs, logits = predict_ids(
                ck.model,
                list(encoded.values()),
                T,
                seed,
                settings=fs,
                with_logits=True,
                prefix_cache=prefix_cache,
                prefix_owner=owner,
                bar=bar,
            )  # [T, N, C] each
        for i, got in zip(encoded, _per_text(probs, logits), strict=True):
            out[i] = got
    return out


def many_probs_grid(
    ck: Checkpoint,
    texts: tuple[str, ...],
    T: int,
    seed: int,
    grid: tuple[SamplingSettings, ...],
    prefix_cache=None,
    owner=None,
    bar=None,
) -> list[list[Sampled | str]]:
    """:func:`many_probs` under each setting of ``grid`` (one list per setting, in its order),
    sampled together: a temperature sweep draws its noise once and runs its values in one pass
    (:func:`uqcore.inference.batch_predict.predict_grid_ids`); the numbers are those
    :func:`many_probs` gives per setting. ``bar``: told ``update(n)`` after each batch of ``n``
    texts, all of the grid's values of them done."""
    resolved = [resolve(ck.config, s) for s in grid]  # ConfigError first: nothing computed
    out, encoded = _encoded(ck, texts, owner)
    per = [list(out) for _ in grid]
    if encoded:
        with torch.inference_mode():
            probs, logits = predict_grid_ids(
                ck.model,
                list(encoded.values()),
                T,
                seed,
                resolved,
                bar=bar,
                prefix_cache=prefix_cache,
                prefix_owner=owner,
            )  # [G, T, N, C] each
        for g, part in enumerate(per):
            for i, got in zip(encoded, _per_text(probs[g], logits[g]), strict=True):
                part[i] = got
    return per
