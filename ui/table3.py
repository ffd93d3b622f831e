"""The Table 3 page's tables (no Streamlit here): one wide table per domain, one row per
sentence, the numbers first so a phone shows them without scrolling sideways."""

from __future__ import annotations

import pandas as pd


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
        numbers = [f"{ck}: {n}" if several else n for ck in checkpoints
                   for n in (stat_name, corr_name)]  # fmt: skip
        table = pd.DataFrame([{**row, "gold": gold, "sentence": sentence}
                              for (sentence, gold), row in rows.items()])  # fmt: skip
        kept = [c for c in numbers if c in table.columns]
        out.append((domain, table[[*kept, "gold", "sentence"]]))
    return out
