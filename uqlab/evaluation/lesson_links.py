"""Which checkpoint shows each Learn step's idea best? Measured on dev data, not chosen by taste.

    python -m uqlab.evaluation.lesson_links [--rows 40] [--T 20] [--seed 0] [--link-T 50] [--step
STEP ...]

For every step of the Learn page that links to the explorer, each candidate (a shipped checkpoint
and the knob overrides a link would carry) samples the first ``--rows`` dev sentences of its own
task that fit the explorer's 64-token window, T times each, and the step's *visible quantity* is
read where the explorer looks first (the last layer, head 0):

- ``gumbel``: the mean standard deviation of the attention weights over the samples (how dark
  the explorer's std map is; 0 = every sample draws the same map);
- ``centroids``: the share of samples in which a key's most likely centroid is not its usual
  one (its most frequent), averaged over the keys: the off-diagonal mass of the explorer's
  "share of the samples" panel (0 = no key ever jumps);
- ``prior``: the BAM prior's distance from uniform, ``max_k |n * prior[h, k] - 1|`` averaged
  over the heads (the quantity ``uqlab.workbench.compute.uniform_prior`` compares with 0.2);
- ``em``: the total-variation distance between a query row's attention before and after EM,
  averaged over the rows (how much the "difference" panel shows);
- ``histogram``: the share of sentences whose samples' p(predicted class) has a standard
  deviation of at least 0.05 (one bar of the explorer's histogram, as in
  :mod:`uqlab.evaluation.first_screen`).

``dev acc`` (the mean prediction's accuracy on the same rows) says whether a knob moved away from
the trained value still leaves a model worth showing. The winner of a step is the candidate with
the largest quantity among those whose dev accuracy is at least :data:`MIN_ACC_SHARE` of the same
checkpoint's at its trained settings (tasks differ, so accuracies are compared within a
checkpoint only; a tie goes to the more accurate); then, of its
task's example sentences (:func:`uqlab.catalog.presets.preset_rows`, the explorer's own presets),
the one where the quantity is largest becomes the link's sentence. ``ui/logic/lesson.py`` records
the choices with the numbers this prints.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from uqcore.checkpoint import Checkpoint
from uqcore.inference.sampling import Capture, SampleResult, sample
from uqcore.registry import load
from uqcore.settings import SamplingSettings, resolve
from uqlab.catalog.paths import CONFIG_DIR, checkpoint_dir
from uqlab.catalog.presets import preset_rows
from uqlab.catalog.task_file import read_task_file
from uqlab.catalog.tasks import TASKS, register
from uqlab.data import load_task

WINDOW = 64  # tokens the explorer's maps show at once: what a projector can show
VISIBLE_STD = 0.05  # one bar of the explorer's histogram of p
MIN_ACC_SHARE = 0.9  # a winner keeps 90 % of its checkpoint's dev accuracy at trained settings


@dataclass(frozen=True)
class Candidate:
    """A checkpoint and the knob overrides (``SamplingSettings`` fields) a link would carry."""

    ckpt: str
    knobs: dict = field(default_factory=dict)

    @property
    def label(self) -> str:
        return self.ckpt + "".join(f" {k}={v:g}" for k, v in sorted(self.knobs.items()))


CANDIDATES: dict[str, tuple[Candidate, ...]] = {
    "gumbel": (
        Candidate("cola-sto"),
        Candidate("cola-sto", {"tau2": 0.3}),
        Candidate("cola-sto", {"tau2": 0.1}),
        Candidate("cola-sto", {"tau2": 3.0}),
        Candidate("imdb-sto-t1"),
        Candidate("imdb-sto-t40"),
        Candidate("imdb-sto-t40", {"tau2": 5.0}),
        Candidate("cola-minilm-sto"),
    ),
    "centroids": (
        Candidate("cola-hsto"),
        Candidate("cola-hsto", {"tau1": 3.0}),
        Candidate("imdb-hsto"),
        Candidate("imdb-hsto", {"tau1": 3.0}),
        Candidate("cola-minilm-hsto"),
        Candidate("imdb-minilm-hsto"),
        Candidate("cr-minilm-hsto"),
    ),
    "prior": (
        Candidate("cola-bam"),
        Candidate("imdb-bam"),
        Candidate("cola-minilm-bam"),
        Candidate("imdb-minilm-bam"),
    ),
    "em": (
        Candidate("cola-probtrans"),
        Candidate("cola-probtrans", {"em_iterations": 10}),
        Candidate("imdb-probtrans"),
        Candidate("imdb-probtrans", {"em_iterations": 10}),
    ),
    # stochastic attention only: the page is about it (MC dropout spreads too, for other reasons)
    "histogram": (
        Candidate("imdb-hsto"),
        Candidate("cola-hsto"),
        Candidate("cola-sto"),
        Candidate("imdb-sto-t40"),
        Candidate("cola-bam"),
        Candidate("cola-minilm-hsto"),
    ),
}


@dataclass(frozen=True)
class Measured:
    """One candidate of one step: its visible quantity averaged over the dev rows, its dev
    accuracy, how many rows, and the example sentence where the quantity is largest."""

    step: str
    candidate: Candidate
    quantity: float
    dev_acc: float
    rows: int
    sentence: str
    sentence_quantity: float


def _sampled(
    ck: Checkpoint,
    text: str,
    T: int,
    seed: int,
    knobs: dict,
) -> SampleResult | None:
    """``text`` sampled T times with the last layer's maps (every sample, head 0), or None when
    it does not fit the window or has no known word."""
    enc = ck.vocab.encode(text, ck.read_len, allow_all_unknown=True)
    if len(enc.ids) > WINDOW or enc.n_words == enc.n_dropped:
        return None
    ids = torch.tensor([enc.ids])  # [1, L]
    mask = torch.ones_like(ids, dtype=torch.bool)
    last = ck.config.n_layers - 1
    capture = Capture(layers=(last,), heads=(0,))
    with torch.inference_mode():
        fs = resolve(ck.model.cfg, SamplingSettings(**knobs))
        return sample(ck.model, ids, mask, T, seed, fs, capture)


def _gumbel(r: SampleResult) -> float:
    att = _last(r).attention[:, 0, 0].float()  # [T, L, L]
    return float(att.std(0, unbiased=False).mean())


def _centroids(r: SampleResult) -> float:
    top = _last(r).centroids[:, 0, 0].argmax(-1)  # [T, L]
    c = _last(r).centroids.shape[-1]
    hits = torch.nn.functional.one_hot(top, c).float().mean(0)  # [L, c] share of samples
    return float(1.0 - hits.max(-1).values.mean())


def prior_distance(prior: np.ndarray) -> float:
    """``max_k |n * prior[h, k] - 1|`` averaged over the heads of ``prior [H, n]``: 0 for a
    uniform prior; ``uqlab.workbench.compute.uniform_prior`` calls it uniform below 0.2."""
    prior = np.asarray(prior, dtype=np.float64)
    return float(np.abs(prior.shape[-1] * prior - 1.0).max(-1).mean())


def _prior(r: SampleResult) -> float:
    return prior_distance(_last(r).prior[0, 0].float().numpy())  # [Hc, n]


def _em(r: SampleResult) -> float:
    m = _last(r)
    after, before = m.attention[0, 0, 0].float(), m.attention_before_em[0, 0, 0].float()
    return float(0.5 * (after - before).abs().sum(-1).mean())  # [L, L] -> rows' TV, mean


def _histogram(r: SampleResult) -> float:
    p = r.probs[:, 0].double()  # [T, C]
    return float(p[:, int(p.mean(0).argmax())].std(unbiased=False) >= VISIBLE_STD)


def _last(r: SampleResult):
    return r.maps[max(r.maps)]


QUANTITY: dict[str, Callable[[SampleResult], float]] = {
    "gumbel": _gumbel,
    "centroids": _centroids,
    "prior": _prior,
    "em": _em,
    "histogram": _histogram,
}


def dev_rows(task: str, rows: int, ck: Checkpoint) -> list[tuple[str, int]]:
    """The first ``rows`` dev sentences of ``task`` (with gold labels) that fit the window."""
    if task not in TASKS:  # a task described by a file of configs/tasks (CR)
        register(read_task_file(CONFIG_DIR / "tasks" / f"{task}.json"))
    split = load_task(task).dev
    out = []
    for text, label in zip(split.texts, split.labels, strict=True):
        enc = ck.vocab.encode(text, ck.read_len, allow_all_unknown=True)
        if len(enc.ids) <= WINDOW and enc.n_words > enc.n_dropped:
            out.append((text, int(label)))
            if len(out) == rows:
                break
    return out


def measure(
    step: str,
    cand: Candidate,
    rows: int,
    T: int,
    seed: int,
    link_T: int,
) -> Measured:
    """The step's quantity for ``cand`` on its task's dev rows (T samples each), and its best
    example sentence (``link_T`` samples, as the link opens it)."""
    ck = load(cand.ckpt, checkpoint_dir())
    task, of = ck.training["task"], QUANTITY[step]
    values, right = [], []
    for text, label in dev_rows(task, rows, ck):
        r = _sampled(ck, text, T, seed, cand.knobs)
        values.append(of(r))
        right.append(int(r.probs[:, 0].mean(0).argmax()) == label)
    best, best_q = "", -1.0
    for text, _, _ in preset_rows(task):
        q = sentence_quantity(step, ck, text, link_T, seed, cand.knobs)
        if q > best_q:
            best, best_q = text, q
    return Measured(
        step, cand, float(np.mean(values)), float(np.mean(right)), len(values), best, best_q
    )


def sentence_quantity(
    step: str,
    ck: Checkpoint,
    text: str,
    T: int,
    seed: int,
    knobs: dict,
) -> float:
    """The step's quantity on one sentence (-1 when it does not fit the window); for the
    histogram step the width of its histogram (:func:`_p_spread`), not the 0/1 share."""
    r = _sampled(ck, text, T, seed, knobs)
    if r is None:
        return -1.0
    return _p_spread(r) if step == "histogram" else QUANTITY[step](r)


def _p_spread(r: SampleResult) -> float:
    """The standard deviation of p(predicted class) over the samples (a sentence's histogram
    width: the histogram step ranks its example sentences by it, not by the 0/1 share)."""
    p = r.probs[:, 0].double()  # [T, C]
    return float(p[:, int(p.mean(0).argmax())].std(unbiased=False))


def winner(measured: list[Measured]) -> Measured:
    """The candidate with the largest quantity among those whose dev accuracy is at least
    :data:`MIN_ACC_SHARE` of the same checkpoint's at its trained settings (no knobs; a
    checkpoint measured only with knobs is its own reference); of equal quantities, the one with
    the higher dev accuracy."""
    trained = {m.candidate.ckpt: m.dev_acc for m in measured if not m.candidate.knobs}
    kept = [
        m for m in measured if m.dev_acc >= MIN_ACC_SHARE * trained.get(m.candidate.ckpt, m.dev_acc)
    ]
    return max(kept, key=lambda m: (m.quantity, m.dev_acc))  # a tie: the more accurate


def markdown(
    step: str,
    measured: list[Measured],
    rows: int,
    T: int,
    seed: int,
    link_T: int,
) -> str:
    """One step's table: every candidate, the winner marked, its example sentence below."""
    won = winner(measured)
    lines = [
        f"{step}: first {rows} dev rows of at most {WINDOW} tokens, T = {T}, seed {seed}",
        "| candidate | quantity | dev acc | rows |",
        "|---|---:|---:|---:|",
        *(
            f"| {'**' if m is won else ''}{m.candidate.label}{'**' if m is won else ''} | "
            f"{m.quantity:.3f} | {m.dev_acc:.3f} | {m.rows} |"
            for m in measured
        ),
        f"sentence ({won.sentence_quantity:.3f} at T = {link_T}): {won.sentence}",
    ]
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rows", type=int, default=40)
    parser.add_argument("--T", type=int, default=20)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--link-T", type=int, default=50, help="samples of the link's sentence")
    parser.add_argument("--step", nargs="*", choices=sorted(CANDIDATES), default=None)
    args = parser.parse_args(argv)
    torch.set_num_threads(1)
    for step in args.step or CANDIDATES:
        got = [
            measure(step, c, args.rows, args.T, args.seed, args.link_T) for c in CANDIDATES[step]
        ]
        print(markdown(step, got, args.rows, args.T, args.seed, args.link_T), flush=True)


if __name__ == "__main__":
    main()
