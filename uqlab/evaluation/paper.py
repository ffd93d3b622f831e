"""The paper's Tables 1-3 (Pei, Wang, Szarvas, AAAI 2022), as numbers, and how a cell is written.

Tables 1 and 2 have one :class:`MetricRow` per method: the paper's mean ± std over 10 runs, in
percent, in and out of domain, keyed by the shipped checkpoint that reproduces it. Table 3 has
one :class:`ExampleRow` per sentence (H-STO-TRANS on CoLA): mean ± variance of p(gold) over the
10 samples and how many of them are correct. A :class:`PaperTable` says which task it reports
and how many decimals the paper prints; :func:`pm` writes every "mean ± spread" cell of the lab
and the app, so the paper's cells and ours read alike. Which tables report a task is
``TaskSpec.paper_tables`` (:mod:`uqlab.catalog.tasks`).
"""

from __future__ import annotations

from dataclasses import dataclass

from uqcore.text.vocab import tokenize
from uqlab.catalog.tasks import get_task

BASELINE_FAMILY = "trans"  # the deterministic transformer: the "Δ vs TRANS" column
PAPER_FAMILIES = ("hsto", "trans")  # the paper's method and its baseline (shown first)


def pm(
    mean: float,
    spread: float | None = None,
    digits: int = 2,
    spread_digits: int | None = None,
    *,
    scale: float = 1,
    unit: str = "",
) -> str:
    """One table cell: ``"87.01 ± 0.075"``. ``scale`` multiplies both numbers (100: percent);
    ``digits`` / ``spread_digits`` are decimals (``spread_digits`` defaults to ``digits``, a
    negative value writes the spread in exponent notation with that many decimals, as in
    ``"0.42 ± 5.0e-04"``); no spread writes the mean alone; ``unit`` follows the cell."""
    head = f"{scale * mean:.{digits}f}"
    if spread is None:
        return head + unit
    sd = digits if spread_digits is None else spread_digits
    tail = f"{scale * spread:.{-sd}e}" if sd < 0 else f"{scale * spread:.{sd}f}"
    return f"{head} ± {tail}{unit}"


def metric_cell(side: dict, metric: str, *, scale: float = 100, unit: str = "") -> str:
    """Our Tables 1-2 cell of one side (``metrics.json["id"]`` or ``["ood"]``): the metric's mean
    ± std over the T runs, in percent by default."""
    return pm(side[f"{metric}_mean"], side[f"{metric}_std"], scale=scale, unit=unit)


def p_gold_cell(mean: float, var: float, *, small: bool = False) -> str:
    """A Table 3 cell: mean ± variance of p(gold), as the paper prints it (2 and 3 decimals);
    ``small``: a variance that would print as 0.000 is written as ``5.0e-04``."""
    return pm(mean, var, 2, -1 if small and var < 5e-4 else 3)


def correct_cell(correct: int, total: int) -> str:
    """A Table 3 cell: ``"7/10"``."""
    return f"{correct}/{total}"


def paper_key(text: str) -> str:
    """A sentence as the paper's Table 3 prints it, to match a sentence against its rows: lower
    case, the words and single punctuation marks of the word-level tokeniser
    (:func:`uqcore.text.vocab.tokenize`) one space apart, ``n't`` joined to its word (the paper
    prints ``did n't``). ``"Sally suspected Joe, but he didn't Holly."`` and the paper's
    ``"sally suspected joe, but he did n't holly."`` have one key; a missing full stop or
    another word makes another sentence."""
    return " ".join(tokenize(text)).replace(" n't", "n't")


@dataclass(frozen=True)
class MetricRow:
    """One method of Table 1 or 2: the paper's mean (± std, None where the paper prints none) in
    and out of domain, in percent."""

    checkpoint: str  # our checkpoint of this method
    method: str  # as the paper names it
    id_mean: float
    id_std: float | None
    ood_mean: float
    ood_std: float | None


@dataclass(frozen=True)
class ExampleRow:
    """One sentence of Table 3, as printed there (tokenised, lower case)."""

    text: str
    gold: int
    domain: str  # "id" or "ood"
    p_gold_mean: float
    p_gold_var: float
    correct: int
    samples: int = 10


@dataclass(frozen=True)
class PaperTable:
    """One of the paper's tables: ``rows`` are :class:`MetricRow` (Tables 1-2) or
    :class:`ExampleRow` (Table 3); ``digits`` / ``spread_digits``: the decimals it prints."""

    number: int
    title: str
    digits: int
    spread_digits: int
    rows: tuple

    def cells(self, row: MetricRow) -> tuple[str, str, str]:
        """``(method, ID cell, OOD cell)`` of a Table 1-2 row, as the paper prints them."""
        d, s = self.digits, self.spread_digits
        return (row.method, pm(row.id_mean, row.id_std, d, s), pm(row.ood_mean, row.ood_std, d, s))

    def row_of(self, checkpoint: str) -> MetricRow | None:
        return next((r for r in self.rows if r.checkpoint == checkpoint), None)

    def example(self, text: str) -> ExampleRow | None:
        """The Table 3 row of ``text`` (matched by :func:`paper_key`), or None."""
        key = paper_key(text)
        return next((r for r in self.rows if paper_key(r.text) == key), None)


TABLES: dict[int, PaperTable] = {
    1: PaperTable(
        1,
        "Table 1: IMDB (ID) and CR (OOD) accuracy, %",
        2,
        3,
        (
            MetricRow("imdb-trans", "TRANS (eta=0.5)", 87.51, None, 63.40, None),
            MetricRow("imdb-mcdropout", "MC-DROPOUT (eta=0.1)", 87.01, 0.075, 63.38, 0.761),
            MetricRow("imdb-ensemble", "ENSEMBLE", 86.89, 0.230, 64.20, 1.585),
            MetricRow("imdb-sto-t1", "STO-TRANS (tau=1)", 82.62, 0.092, 67.92, 0.634),
            MetricRow("imdb-sto-t40", "STO-TRANS (tau=40)", 87.42, 0.022, 63.78, 0.289),
            MetricRow("imdb-hsto", "H-STO-TRANS (tau1=1, tau2=20)", 87.63, 0.017, 67.14, 0.400),
        ),
    ),
    2: PaperTable(
        2,
        "Table 2: CoLA MCC, % (x100)",
        2,
        2,
        (
            MetricRow("cola-trans", "TRANS (eta=0.1)", 20.09, None, 16.46, None),
            MetricRow("cola-mcdropout", "MC-DROPOUT (eta=0.1)", 19.91, 0.40, 16.70, 2.21),
            MetricRow("cola-ensemble", "ENSEMBLE", 21.20, 2.59, 16.73, 4.92),
            MetricRow("cola-sto", "STO-TRANS", 23.27, 0.75, 15.25, 4.65),
            MetricRow("cola-hsto", "H-STO-TRANS", 20.52, 0.76, 16.49, 4.08),
        ),
    ),
    3: PaperTable(
        3,
        "Table 3: per-example statistics (H-STO-TRANS, CoLA)",
        2,
        3,
        (
            ExampleRow("no man has ever beaten the centaur.", 1, "id", 0.75, 0.001, 10),
            ExampleRow("nora sent the book to london", 1, "id", 0.65, 0.007, 10),
            ExampleRow("sally suspected joe, but he did n't holly.", 1, "id", 0.60, 0.008, 8),
            ExampleRow("kim is eager to recommend.", 0, "id", 0.41, 0.011, 3),
            ExampleRow("he analysis her was flawed", 0, "id", 0.24, 0.003, 0),
            ExampleRow("sandy had read how many papers ? !", 1, "ood", 0.67, 0.010, 10),
            ExampleRow("which book did each author recommend ?", 1, "ood", 0.58, 0.010, 7),
            ExampleRow(
                "she talked to harry , but i do n't know who else .", 1, "ood", 0.52, 0.013, 4
            ),
            ExampleRow("john is tall on several occasions .", 0, "ood", 0.42, 0.005, 1),
            ExampleRow(
                "they noticed the painting , but i do n't know for how long .",
                0,
                "ood",
                0.28,
                0.003,
                0,
            ),
        ),
    ),
}
TABLE3 = TABLES[3].rows
# how the paper's Table 3 was made, for a note beside its cells (the app's Table 3 page)
TABLE3_SETUP = (
    f"T = {TABLE3[0].samples} samples of the paper's word-level H-STO-TRANS, trained on its own "
    "split of CoLA"
)


def _of(task: str, kind: type) -> list[PaperTable]:
    return [TABLES[n] for n in get_task(task).paper_tables if isinstance(TABLES[n].rows[0], kind)]


def metric_table(task: str) -> PaperTable | None:
    """The paper's Table 1 or 2 for ``task`` (None if the paper reports no metrics for it)."""
    found = _of(task, MetricRow)
    return found[0] if found else None


def examples(task: str) -> tuple[ExampleRow, ...]:
    """The paper's Table 3 sentences of ``task`` (none for a task it has no Table 3 of)."""
    return tuple(r for t in _of(task, ExampleRow) for r in t.rows)


def example_of(task: str, text: str) -> ExampleRow | None:
    """The paper's Table 3 row of ``text`` among ``task``'s (:func:`examples`, matched by
    :func:`paper_key`), or None: a sentence the paper does not report, or a task it has no
    Table 3 of."""
    key = paper_key(text)
    return next((r for r in examples(task) if paper_key(r.text) == key), None)


def example_cells(text: str) -> tuple[str, str] | None:
    """``(p(gold) mean ± var, correct/10)`` the paper prints for ``text``, or None."""
    for n in (n for n, t in TABLES.items() if isinstance(t.rows[0], ExampleRow)):
        row = TABLES[n].example(text)
        if row is not None:
            cells = p_gold_cell(row.p_gold_mean, row.p_gold_var)
            return cells, correct_cell(row.correct, row.samples)
    return None
