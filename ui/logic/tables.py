"""The app's tables: columns wide enough for their header and values (the data grid sizes a
column from its first rows only, and cut "cola-minilm-mcdro"), and Table 3's wide tables, one
row per sentence with the numbers first so a phone shows them without scrolling sideways."""

from __future__ import annotations

import math

import pandas as pd

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
    cells: pd.DataFrame, checkpoints: list[str], stat_name: str, corr_name: str
) -> list[tuple[str, pd.DataFrame]]:
    """``[(domain, table)]`` in the order the domains first appear in ``cells`` (one row per
    sentence and checkpoint, with ``domain, sentence, gold, checkpoint, stat, corr``). Each
    table has one row per (sentence, gold): every checkpoint's ``stat`` and ``corr`` columns
    first (named ``stat_name`` and ``corr_name``, after the checkpoint when there are several),
    then ``gold``, then ``sentence`` last (the long text a narrow screen may cut)."""
    several = len(checkpoints) > 1
    out = []
    for domain, part in cells.groupby("domain", sort=False):
        rows: dict[tuple, dict] = {}
        for r in part.itertuples(index=False):
            row = rows.setdefault((r.sentence, r.gold), {})
            prefix = f"{r.checkpoint}: " if several else ""
            row[prefix + stat_name], row[prefix + corr_name] = r.stat, r.corr
        numbers = [
            f"{ck}: {n}" if several else n for ck in checkpoints for n in (stat_name, corr_name)
        ]
        table = pd.DataFrame(
            [{**row, "gold": gold, "sentence": sentence} for (sentence, gold), row in rows.items()]
        )
        kept = [c for c in numbers if c in table.columns]
        out.append((domain, table[[*kept, "gold", "sentence"]]))
    return out
