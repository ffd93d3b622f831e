"""Sentences a user brings: pasted lines and uploaded CSV files, parsed into (text, label,
domain) rows with one plain message per problem. No Streamlit here."""

from __future__ import annotations

import io
from collections.abc import Sequence

import pandas as pd

from ui.logic.format import plain

MAX_ROWS = 500  # sentences per Table 3 run
MAX_UPLOAD_BYTES = 2 * 2**20  # Table 3's CSV of sentences
Row = tuple[str, int | None, str]  # text, gold label (None = unknown), domain


def upload_mb(limit_bytes: int) -> int:
    """An upload limit in bytes as whole MB (2**20 bytes): the number a page gives
    ``st.file_uploader(max_upload_size=...)`` (the widget's "Limit N MB per file", enforced by
    the browser) and states in its label or caption, so both come from one constant. A limit
    that is not a whole number of MB is refused (the widget would state a rounded one)."""
    mb, rest = divmod(limit_bytes, 2**20)
    if rest or mb < 1:
        raise ValueError(f"an upload limit must be a whole number of MB; got {limit_bytes} bytes")
    return mb


def _label(raw: str, names: Sequence[str]) -> int | None:
    """A label given as a class number or a class name (case-insensitive); None if neither."""
    raw = raw.strip()
    if raw.isdigit() and int(raw) < len(names):
        return int(raw)
    lowered = [n.lower() for n in names]
    return lowered.index(raw.lower()) if raw.lower() in lowered else None


def parse_lines(text: str, names: Sequence[str]) -> tuple[list[Row], list[str]]:
    """One sentence per line, optionally ``sentence<TAB>label[<TAB>domain]``. Returns rows and
    problems (a line with a bad label is kept without a label and reported)."""
    rows: list[Row] = []
    problems: list[str] = []
    for n, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        parts = line.split("\t")
        sentence = parts[0].strip()
        if not sentence:
            problems.append(f"Line {n}: no sentence before the tab; skipped.")
            continue
        label = None
        if len(parts) > 1 and parts[1].strip():
            label = _label(parts[1], names)
            if label is None:
                problems.append(
                    f"Line {n}: label '{plain(parts[1].strip()[:20])}' is not one of "
                    f"{', '.join(names)} or 0..{len(names) - 1}; kept unlabelled."
                )
        domain = parts[2].strip() if len(parts) > 2 and parts[2].strip() else "pasted"
        rows.append((sentence, label, domain))
    return _capped(rows, problems)


def parse_csv(data: bytes, names: Sequence[str]) -> tuple[list[Row], list[str]]:
    """A CSV with a ``sentence`` (or ``text``) column and optional ``label`` and ``domain``.
    Raises ValueError with a message for a file that cannot be used at all."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise ValueError(
            f"The file has {len(data) / 2**20:.1f} MB; the limit is "
            f"{upload_mb(MAX_UPLOAD_BYTES)} MB. Upload at most {MAX_ROWS} sentences."
        )
    try:
        frame = pd.read_csv(io.BytesIO(data), dtype=str, keep_default_na=False)
    except (UnicodeDecodeError, pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
        raise ValueError(
            f"This file is not a readable CSV ({type(exc).__name__}): save it as "
            "UTF-8 CSV with a header row."
        ) from None
    columns = {c.strip().lower(): c for c in frame.columns}
    text_col = columns.get("sentence") or columns.get("text")
    if text_col is None:
        found = ", ".join(map(str, frame.columns[:8])) or "none"
        raise ValueError(f"The CSV needs a 'sentence' (or 'text') column; it has: {plain(found)}.")
    rows: list[Row] = []
    problems: list[str] = []
    for i, record in enumerate(frame.to_dict("records"), start=2):
        sentence = str(record[text_col]).strip()
        if not sentence:
            problems.append(f"Row {i}: empty sentence; skipped.")
            continue
        label = None
        raw = str(record.get(columns.get("label", ""), "")).strip()
        if raw:
            label = _label(raw, names)
            if label is None:
                problems.append(
                    f"Row {i}: label '{plain(raw[:20])}' is not a class; kept unlabelled."
                )
        domain = str(record.get(columns.get("domain", ""), "")).strip() or "uploaded"
        rows.append((sentence, label, domain))
    if not rows:
        raise ValueError("The CSV has no sentences.")
    return _capped(rows, problems)


def _capped(rows: list[Row], problems: list[str]) -> tuple[list[Row], list[str]]:
    if len(rows) > MAX_ROWS:
        problems.append(f"{len(rows):,} sentences given; the first {MAX_ROWS} are used.")
        rows = rows[:MAX_ROWS]
    return rows, problems
