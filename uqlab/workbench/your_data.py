"""A visitor's labelled file on the dataset pages: read it, let them pick its columns and map its
label values to the checkpoint's labels, and turn it into the pages' rows. No Streamlit here.

The file is read by the lab's reader (:mod:`uqlab.catalog.labelled`: CSV, TSV, JSON lines, Parquet)
from the uploaded bytes, within :data:`MAX_ROWS` rows and :data:`MAX_BYTES` bytes; nothing is
written to disk. Every problem raises :class:`uqcore.exceptions.InputError` with a message that
names the file, the column or the row.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

import pyarrow as pa

from uqcore.exceptions import InputError
from uqlab.catalog.labelled import SUFFIXES, read_table

MAX_BYTES = 20 * 2**20  # an uploaded data file
MAX_ROWS = 5_000  # rows sampled from one uploaded file
MAX_DISTINCT_LABELS = 50  # distinct label values a file may hold
KINDS = tuple(dict.fromkeys(SUFFIXES.values()))  # csv, tsv, jsonl, parquet
UPLOAD_TYPES = tuple(s.lstrip(".") for s in SUFFIXES)


@dataclass(frozen=True)
class DataFile:
    """An uploaded table: its ``name``, ``digest`` (sha256 of the bytes: what a computed
    result is keyed by), its ``columns`` and the table itself."""

    name: str
    digest: str
    table: pa.Table

    @property
    def columns(self) -> list[str]:
        return list(self.table.column_names)

    def __len__(self) -> int:
        return self.table.num_rows


def read_upload(name: str, data: bytes) -> DataFile:
    """The table of an uploaded file (its type from its name), within the limits."""
    suffix = "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""
    kind = SUFFIXES.get(suffix)
    if kind is None:
        raise InputError(f"{name[:80]}: use a .csv, .tsv, .jsonl or .parquet file.")
    if len(data) > MAX_BYTES:
        raise InputError(
            f"{name[:80]} has {len(data) / 2**20:.1f} MB; the most read here is "
            f"{MAX_BYTES >> 20} MB."
        )
    table = read_table(bytes(data), kind, name[:80], max_rows=MAX_ROWS)  # JSON lines: bounded
    if table.num_rows > MAX_ROWS:
        raise InputError(
            f"{name[:80]} has {table.num_rows:,} rows; at most {MAX_ROWS:,} "
            "here: upload a sample of it."
        )
    if table.num_rows == 0:
        raise InputError(f"{name[:80]} holds no rows.")
    return DataFile(name[:80], hashlib.sha256(data).hexdigest(), table)


def guess_columns(f: DataFile) -> tuple[str, str]:
    """A first guess of the text and label columns: the string column with the longest values,
    and a column named like a label (else the one with the fewest distinct values)."""
    cols = f.columns
    strings = [
        c
        for c in cols
        if pa.types.is_string(f.table.schema.field(c).type)
        or pa.types.is_large_string(f.table.schema.field(c).type)
    ]

    def mean_len(c: str) -> float:
        values = [v for v in f.table.column(c).to_pylist()[:200] if isinstance(v, str)]
        return sum(map(len, values)) / max(1, len(values))

    text = max(strings, key=mean_len) if strings else cols[0]
    usual = ("label", "labels", "gold", "class", "y", "target")
    named = [c for c in cols if c != text and c.strip().lower() in usual]
    if named:
        return text, named[0]
    others = [c for c in cols if c != text] or cols
    return text, min(others, key=lambda c: len(set(map(str, f.table.column(c).to_pylist()))))


def label_values(f: DataFile, column: str) -> list[str]:
    """The distinct values of the label column (as text, in first-seen order)."""
    values = list(dict.fromkeys(str(v) for v in f.table.column(column).to_pylist()))
    if len(values) > MAX_DISTINCT_LABELS:
        raise InputError(
            f"{f.name}: column {column!r} has {len(values):,} distinct values; a "
            f"label column has at most {MAX_DISTINCT_LABELS}. Pick the label "
            "column."
        )
    return values


def default_mapping(values: list[str], names: tuple[str, ...]) -> dict[str, int | None]:
    """Each label value -> the checkpoint's label it most likely is: the same name (any case,
    or its start: ``negative`` is ``neg``), its id, else None (left out)."""
    out: dict[str, int | None] = {}
    lowered = [n.lower() for n in names]
    for v in values:
        key = v.strip().lower()
        hit = next((i for i, n in enumerate(lowered) if key == n), None)
        if hit is None:
            hit = next(
                (
                    i
                    for i, n in enumerate(lowered)
                    if key and (key.startswith(n) or n.startswith(key))
                ),
                None,
            )
        if hit is None and key.lstrip("-").isdigit() and 0 <= int(key) < len(names):
            hit = int(key)
        out[v] = hit
    return out


def rows(
    f: DataFile, text: str, label: str, mapping: dict[str, int | None], domain: str
) -> list[tuple[str, int, str, int]]:
    """The pages' rows ``(text, gold id, domain, row index)`` of the file's rows whose label is
    mapped (rows mapped to None are left out); an empty text is refused with its row."""
    if text not in f.columns or label not in f.columns:
        raise InputError(f"{f.name} has no column {text!r} or {label!r}.")
    if text == label:
        raise InputError("Pick different columns for the text and the label.")
    out = []
    texts, labels = f.table.column(text).to_pylist(), f.table.column(label).to_pylist()
    for i, (t, y) in enumerate(zip(texts, labels, strict=True)):
        gold = mapping.get(str(y))
        if gold is None:
            continue
        if not isinstance(t, str) or not t.strip():
            raise InputError(f"{f.name}, row {i + 1}: the text in {text!r} is empty or not text.")
        out.append((t, int(gold), domain, i))
    if not out:
        raise InputError(
            f"{f.name}: no row has a label mapped to the checkpoint's labels; map "
            "at least one value."
        )
    return out
