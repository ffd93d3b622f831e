"""The app's tables: columns wide enough for their header and values (the data grid sizes a
column from its first rows only, and cut "cola-minilm-mcdro"), and Table 3's wide tables, one
row per sentence, the sentence and its gold label first (the sentence pinned and wrapped, so a
phone's sideways scroll keeps each number beside its sentence), the paper's cells beside ours
where the sentence is one of its Table 3 (:func:`paper_cells`)."""

from __future__ import annotations

import math
from collections.abc import Sequence

import pandas as pd

from uqlab.catalog.tasks import PAPER_CHECKPOINT
from uqlab.evaluation.paper import TABLE3_SETUP, correct_cell, example_of, p_gold_cell

CHAR_PX = 7.0  # an average character of the grid's 14 px font, with room for capitals
PAD_PX = 28  # the cell's padding and the header's sort and menu icons
MAX_PX = 420


def px(*texts: object) -> int:
    """A column width in pixels that shows the longest of ``texts`` whole (at most MAX_PX)."""
    longest = max((len(str(t)) for t in texts), default=0)
    return min(MAX_PX, math.ceil(CHAR_PX * longest) + PAD_PX)


def fitted(frame: pd.DataFrame, pinned: str | None = None, **configs) -> dict:
    """``column_config`` for ``st.dataframe(frame)``: every text column as wide as its header
    and longest value (``pinned``, e.g. the checkpoint name, stays at the left when the table
    scrolls sideways); ``configs`` (column -> a ``st.column_config`` dict) are kept, given the
    width of their label where they set none."""
    out = {}
    for column in frame.columns:
        config = dict(configs.get(column) or {})
        label = config.get("label") or column
        if config.get("width") is None:
            numbers = pd.api.types.is_numeric_dtype(frame[column])
            values = ["-0.00000"] if numbers else frame[column].astype(str)
            config["width"] = px(label, *values)
        if column == pinned:
            config["pinned"] = True
        out[column] = config
    return out


def wide_tables(
    cells: pd.DataFrame,
    checkpoints: list[str],
    stat_name: str,
    corr_name: str,
    extra: Sequence[str] = (),
) -> list[tuple[str, pd.DataFrame]]:
    """``[(domain, table)]`` in the order the domains first appear in ``cells`` (one row per
    sentence and checkpoint, with ``domain, sentence, gold, checkpoint, stat, corr`` and the
    ``extra`` columns, the same for every checkpoint of a sentence). Each table has one row per
    (sentence, gold): every checkpoint's ``stat`` and ``corr`` columns first (named
    ``stat_name`` and ``corr_name``, after the checkpoint when there are several), after
    ``sentence`` and ``gold`` (issue 45: last, they were off a phone's screen, so its numbers
    had no sentence beside them), then the ``extra`` columns (the paper's,
    :data:`PAPER_COLUMNS`). :func:`sentence_first` draws them so."""
    several = len(checkpoints) > 1
    out = []
    for domain, part in cells.groupby("domain", sort=False):
        rows: dict[tuple, dict] = {}
        for r in part.to_dict("records"):
            row = rows.setdefault((r["sentence"], r["gold"]), {})
            prefix = f"{r['checkpoint']}: " if several else ""
            row[prefix + stat_name], row[prefix + corr_name] = r["stat"], r["corr"]
            row.update({c: r[c] for c in extra})
        numbers = [
            f"{ck}: {n}" if several else n for ck in checkpoints for n in (stat_name, corr_name)
        ]
        table = pd.DataFrame(
            [{**row, "gold": gold, "sentence": sentence} for (sentence, gold), row in rows.items()]
        )
        kept = [c for c in numbers if c in table.columns]
        out.append((domain, table[["sentence", "gold", *kept, *extra]]))
    return out


SENTENCE_PX = 200  # Table 3's pinned sentence column: half a phone, the rest scrolls beside it
WRAP_ROW_PX = 72  # a row tall enough for the grid to wrap text (over 4 rem): three lines


def sentence_first(table: pd.DataFrame) -> dict:
    """``st.dataframe`` arguments for a :func:`wide_tables` table: the sentence pinned at the
    left, :data:`SENTENCE_PX` wide and wrapped over three lines (rows :data:`WRAP_ROW_PX`
    high), every other column as wide as its header and values (:func:`fitted`)."""
    config = fitted(table, sentence={"width": SENTENCE_PX})
    config["sentence"]["pinned"] = True
    return {"column_config": config, "row_height": WRAP_ROW_PX}


MISSING = "—"  # a sentence the paper's Table 3 does not report
PAPER_COLUMNS = ("paper p(gold) mean ± var", "paper correct/T")


def paper_cells(task: str, text: str, gold: int | None, names: Sequence[str]) -> tuple[str, str]:
    """The paper's Table 3 cells of ``text`` (``p(gold) mean ± var``, ``correct/10``), matched
    by :func:`uqlab.evaluation.paper.paper_key`; :data:`MISSING` for a sentence the paper does not
    report. A sentence given another gold label than the paper's gets no numbers (they are p of the
    paper's gold): the stat cell names the paper's gold (``names``: the label names)."""
    row = example_of(task, text)
    if row is None:
        return MISSING, MISSING
    if gold is not None and int(gold) != row.gold:
        paper_gold = names[row.gold] if row.gold < len(names) else str(row.gold)
        return f"{MISSING} (the paper's gold: {paper_gold})", MISSING
    return p_gold_cell(row.p_gold_mean, row.p_gold_var), correct_cell(row.correct, row.samples)


def paper_setup(checkpoints: Sequence[str], T: int, seed: int) -> str:
    """Where the paper's Table 3 and ours differ, in one line (the page's note, the CSV's)."""
    return (
        f"The paper's columns are quoted from its Table 3: {TABLE3_SETUP} (our closest "
        f"checkpoint: {PAPER_CHECKPOINT}). Ours: {', '.join(checkpoints)} at T = {T}, seed "
        f"{seed}, from the sidebar. The set-ups differ, so the numbers are read side by side, "
        "not expected to be equal."
    )
