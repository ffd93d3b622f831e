"""The notebook's three calls: the explorer's result for one text, the dataset analysis of a
checkpoint on a file, and two analyses compared with a paired verdict. No Streamlit.

    from uqlab.workbench.notebook import analyze, compare, explore

    ex = explore("cola-minilm-hsto", "The book was written by John.", label=1)
    ex.summary                      # the Table 3 numbers, as the explorer shows them
    ex.figures["histogram"]         # the explorer's plotly figure (renders inline)
    ex.attention(layer=5, head=2)   # the attention panels of any layer and head

    a = analyze("cola-minilm-trans", "my-file.csv")      # no file: the bundled examples
    a.frame                         # one row per text: p, correct, entropy, MI, OOD scores
    a.summary                       # accuracy and ECE with 95 % bootstrap intervals
    a.figures()["reliability"]      # Results' figures: reliability, risk-coverage, ROC, ...
    compare(a, analyze("cola-minilm-hsto", "my-file.csv"))  # the paired verdict

Each call computes what the page computes from the same inputs, with the same functions: the
records (:class:`uqlab.workbench.compute.ExploreResult`, the frame of
:func:`uqlab.workbench.dataset.frame`) and the figures (:mod:`uqlab.workbench.figures`, assembled
by :mod:`uqlab.workbench.dataset_views`) are the page's for the same checkpoint, text or rows,
settings, T and seed. A file is read as the pages read an upload (:mod:`uqlab.workbench.your_data`:
its bounds, its column guesses, its label mapping).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from html import escape
from pathlib import Path

import pandas as pd
import plotly.graph_objects as go
from tqdm import tqdm

from uqcore.checkpoint import Checkpoint
from uqcore.exceptions import InputError, UQError
from uqcore.registry import CheckpointInfo, list_checkpoints, load
from uqcore.settings import SamplingSettings
from uqlab.catalog.paths import checkpoint_dir
from uqlab.catalog.task_file import register_from_training
from uqlab.catalog.tasks import label_names
from uqlab.evaluation.two_models import sentence
from uqlab.workbench import compute, dataset, dataset_views, slices, worth
from uqlab.workbench.explore_figures import attention_spec, tokens_for_axes, window
from uqlab.workbench.figures import prediction_histogram, running_mean_figure
from uqlab.workbench.titles import as_figure
from uqlab.workbench.your_data import (
    DataFile,
    default_mapping,
    guess_columns,
    label_values,
    read_upload,
)
from uqlab.workbench.your_data import rows as file_rows


def checkpoint(name: str | os.PathLike, root: str | os.PathLike | None = None):
    """``(Checkpoint, CheckpointInfo)`` of checkpoint ``name`` in ``root`` (default: the
    checkpoint folder, :func:`uqlab.catalog.paths.checkpoint_dir`), or of the checkpoint folder
    ``name`` itself when it is a path to one. Its task, when a task file describes it, is
    registered as the pages register it."""
    path = Path(name)
    if root is None and path.is_dir():
        root, name = path.parent, path.name
    folder = Path(root) if root is not None else checkpoint_dir()
    ck = load(str(name), folder)
    info = next((i for i in list_checkpoints(folder) if i.name == str(name)), None)
    if info is None or info.error:
        raise UQError(f"{name}: {info.error if info else 'not listed'}")
    register_from_training(info.training)
    return ck, info


def _loaded(ckpt, root) -> tuple[Checkpoint, CheckpointInfo]:
    return ckpt if isinstance(ckpt, tuple) else checkpoint(ckpt, root)


# ----------------------------------------------------------------------------------- explore
@dataclass(frozen=True)
class Explored:
    """One text sampled T times, as the explorer shows it: ``result`` (the page's record, its
    Table 3 ``summary`` set for ``label``), the checkpoint's ``names`` of its labels, and
    ``figures``: the prediction histogram, the running mean and the last layer's attention
    panels (head 0), each the plotly figure the page draws."""

    checkpoint: str
    names: tuple[str, ...]
    result: compute.ExploreResult
    gold: bool

    @property
    def summary(self) -> pd.Series:
        """The Table 3 numbers (p of the target class, its variance, the samples that picked
        it, entropy and mutual information), as one row."""
        s = self.result.summary
        return pd.Series(
            {
                "target": self.names[s.target],
                "predicted": self.names[s.predicted],
                "p_mean": s.p_mean,
                "p_var": s.p_var,
                "correct": f"{s.correct}/{s.T}",
                "entropy": s.entropy,
                "mi": s.mi,
            },
            name=self.checkpoint,
        )

    def attention(self, layer: int | None = None, head: int = 0, sample: int = 0) -> list:
        """The explorer's attention panels of ``layer`` (default: the last, as the page opens)
        and ``head``: sample ``sample``, the mean and the spread of the captured samples, one
        figure each (one when every sample has the same map), the first 64 tokens."""
        res = self.result
        layer = max(res.maps) if layer is None else layer
        if layer not in res.maps:
            raise InputError(f"Layer {layer} has no maps here: pick one of {sorted(res.maps)}.")
        tokens = tokens_for_axes(res)
        lo, hi = window(len(tokens))
        specs, _ = attention_spec(res, tokens, layer, head, sample, lo, hi, False, False)
        return [as_figure(s) for s in specs]

    @property
    def figures(self) -> dict[str, go.Figure | list]:
        res, s = self.result, self.result.summary
        target = self.names[s.target]
        return {
            "histogram": as_figure(
                prediction_histogram.spec(res.probs, self.names, s.target, self.gold)
            ),
            "running_mean": as_figure(
                running_mean_figure.spec(*compute.running_mean(res.probs[:, s.target]), target)
            ),
            "attention": self.attention(),
        }

    def _repr_html_(self) -> str:
        return self.summary.to_frame().T.to_html(float_format=lambda v: f"{v:.4g}")


def explore(
    ckpt,
    text: str,
    *,
    label: int | None = None,
    T: int = compute.EXPLORE_T,
    seed: int = 0,
    whole: bool = False,
    root: str | os.PathLike | None = None,
    **knobs,
) -> Explored:
    """The explorer's result for ``text`` on checkpoint ``ckpt`` (a name, a folder, or what
    :func:`checkpoint` returned): T samples with ``seed``, every knob the sidebar sets as a
    keyword (``tau1=``, ``tau2=``, ``noise_scale=``, ...; unset: the checkpoint's trained
    value), ``label``: the gold label's id (None: the predicted class is the target).
    Raises :class:`uqcore.exceptions.UQError` with the page's message for bad input."""
    ck, info = _loaded(ckpt, root)
    res = compute.explore(ck, text, T, seed, SamplingSettings(**knobs), whole)
    return Explored(info.name, label_names(info), res.for_label(label), label is not None)


# ----------------------------------------------------------------------------------- analyze
@dataclass(frozen=True)
class Analysis:
    """A checkpoint's dataset analysis: the ``frame`` (one row per readable text: the pages'
    columns), the rows it ``skipped`` (no known word), the ``settings`` it was computed with
    (what an export records), the label ``names``, the checkpoint's model ``card``, whether
    the rows are a visitor's file (``mine``) and the bootstrap ``seed``."""

    checkpoint: str
    names: tuple[str, ...]
    frame: pd.DataFrame = field(repr=False)
    skipped: int
    settings: dict
    card: str = field(default="", repr=False)
    mine: bool = False
    seed: int = 0

    @classmethod
    def of(
        cls,
        info: CheckpointInfo,
        frame: pd.DataFrame,
        settings: dict,
        mine: bool,
        seed: int = 0,
        skipped: int = 0,
    ) -> Analysis:
        """A page's analysis: checkpoint ``info``'s ``frame`` computed with ``settings`` (the
        page's record; the checkpoint's name and fitted temperature are added) and the rows it
        ``skipped``."""
        temperature = dataset.fitted_temperature(info.metrics) if "p1_scaled" in frame else None
        settings = {"checkpoint": info.name, **settings, "temperature": temperature}
        card = info.card or ""
        return cls(info.name, label_names(info), frame, skipped, settings, card, mine, seed)

    @property
    def summary(self) -> pd.DataFrame:
        """Each domain's rows, accuracy and ECE (and macro-F1 with more than two classes) with
        95 % bootstrap intervals: the dataset pages' summary lines."""
        lines = dataset.headlines(self.frame, self.seed)
        return pd.DataFrame([{"domain": h.domain, **h.cells()} for h in lines])

    def figures(self, score: str = "mutual_information") -> dict[str, go.Figure]:
        """Results' figures of this checkpoint: reliability, risk-coverage, confusion, the ROC of
        ``score`` (a :data:`uqlab.workbench.dataset.SCORES` name) when there are out-of-domain
        rows, and the histogram of ``score`` by domain."""
        frames = {self.checkpoint: self.frame}
        out = {
            "reliability": dataset_views.reliability(frames, self.mine),
            "risk_coverage": dataset_views.risk_coverage(frames, self.mine),
            "confusion": dataset_views.confusion(
                self.checkpoint, self.frame, self.names, self.mine
            ),
        }
        roc = dataset_views.roc(frames, score)
        if roc is not None:
            out["roc"] = roc
        out["histogram"] = dataset_views.histogram(self.checkpoint, self.frame, score)
        return out

    def worst_errors(self, n: int = 20) -> pd.DataFrame:
        """The ``n`` most confident errors with their spread (Error analysis's view)."""
        return dataset_views.worst_errors(self.frame, self.names, n)

    def most_uncertain(self, n: int = 20) -> pd.DataFrame:
        """The ``n`` rows of highest mutual information with their spread."""
        return dataset_views.most_uncertain(self.frame, self.names, n)

    def slices(self, by: str = "length", pattern: str = "") -> pd.DataFrame:
        """Error analysis's slices (:data:`uqlab.workbench.slices.BY`)."""
        return slices.table(self.frame, by, self.names, pattern)

    def _repr_html_(self) -> str:
        head = f"<p><b>{escape(self.checkpoint)}</b>: {len(self.frame):,} rows</p>"
        return head + self.summary.to_html(index=False)


def read_file(
    file, names: tuple[str, ...], domain: str, text_column=None, label_column=None, labels=None
) -> list[tuple[str, int, str, int]]:
    """The pages' rows of a labelled file: a path (CSV, TSV, JSON lines or Parquet, read within
    the upload's bounds), ``text_column`` / ``label_column`` (default: the pages' guesses) and
    ``labels``: each label value -> the checkpoint's label id (default: the pages' guesses)."""
    path = Path(file)
    if not path.is_file():
        raise InputError(f"{file}: no such file.")
    f: DataFile = read_upload(path.name, path.read_bytes())
    guess_text, guess_label = guess_columns(f)
    text, label = text_column or guess_text, label_column or guess_label
    mapping = labels or default_mapping(label_values(f, label), names)
    return file_rows(f, text, label, {str(k): v for k, v in mapping.items()}, domain)


def analyze(
    ckpt,
    file=None,
    *,
    ood_file=None,
    text_column: str | None = None,
    label_column: str | None = None,
    labels: dict | None = None,
    T: int = dataset.DATASET_T,
    seed: int = 0,
    per: int | None = None,
    progress: bool = True,
    root: str | os.PathLike | None = None,
    **knobs,
) -> Analysis:
    """The dataset analysis of checkpoint ``ckpt`` on a labelled ``file`` (and an optional
    out-of-domain ``ood_file``, read the same way), or, without one, on its task's bundled
    examples: every text sampled T times with ``seed`` and the knobs given (unset: trained), the
    temperature the checkpoint's evaluation fitted applied as on Results (``p1_scaled``).
    ``per``: rows drawn with ``seed`` from each domain (None: all)."""
    ck, info = _loaded(ckpt, root)
    names = label_names(info)
    rows = None
    if file is not None:
        rows = read_file(file, names, dataset.YOURS, text_column, label_column, labels)
        if ood_file is not None:
            rows += read_file(ood_file, names, dataset.OUT, text_column, label_column, labels)
    elif not dataset.subsets(info.task):
        raise InputError(f"{info.name}'s task has no bundled examples: give it a file.")
    picked = dataset.pick(info.task, per, seed, None if rows is None else tuple(rows))
    overrides = SamplingSettings(**knobs)
    bar = tqdm(total=len(picked), desc=info.name, disable=not progress, unit="text")
    sampler = lambda texts: compute.many_probs(ck, texts, T, seed, overrides, bar=bar)  # noqa: E731
    temperature = dataset.fitted_temperature(info.metrics)
    try:
        frame, skipped = dataset.frame(picked, sampler, temperature=temperature)
    finally:
        bar.close()
    settings = {
        "checkpoint": info.name,
        "examples": f"your file {Path(file).name}" if file is not None else "bundled",
        "T": T,
        "seed": seed,
        "examples per domain": per or "all",
        "temperature": temperature,
        **overrides.set_fields(),
    }
    return Analysis(
        info.name, names, frame, skipped, settings, info.card or "", rows is not None, seed
    )


# ----------------------------------------------------------------------------------- compare
@dataclass(frozen=True)
class Paired:
    """B against A on the labelled rows both read: ``block`` (the verdict,
    :func:`uqlab.evaluation.two_models.two_models`), its ``table`` and ``sentence``."""

    block: dict

    @property
    def table(self) -> pd.DataFrame:
        return worth.pair_table(self.block)

    @property
    def sentence(self) -> str:
        return sentence(self.block)

    @property
    def caption(self) -> str:
        """What the table's rows and intervals are (Results' caption)."""
        return worth.pair_caption(self.block)

    def _repr_html_(self) -> str:
        return f"<p>{escape(self.sentence)}</p>" + self.table.to_html(index=False)


def compare(a: Analysis, b: Analysis, score: str = "max_prob", seed: int = 0) -> Paired:
    """The paired verdict of ``b`` against ``a`` (Results' "Two checkpoints, paired"): accuracy,
    ECE, NLL, Brier and the AUROC of ``score`` for each model's own errors, paired bootstrap
    intervals over the rows both read. Refused below the page's minimum of rows."""
    if a.checkpoint == b.checkpoint:
        raise InputError("Compare two different checkpoints.")
    frames = {a.checkpoint: a.frame, b.checkpoint: b.frame}
    block, n = worth.pair(frames, a.checkpoint, b.checkpoint, score, seed)
    if block is None:
        raise InputError(worth.too_few_pair(n, a.mine))
    return Paired(block)
