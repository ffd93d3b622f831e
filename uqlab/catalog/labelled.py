"""Read a labelled table file: CSV, TSV, JSON lines, Parquet, or a folder that
``datasets.Dataset.save_to_disk`` wrote. The one reader behind task files
(:mod:`uqlab.catalog.task_file`) and the app's uploaded data.

:func:`read_labelled` returns the texts and the label ids of one file, validated: the columns
exist, every text is a non-empty string of valid UTF-8, every label is one of the task's label
names (or its id 0..C-1), and the file stays within :data:`MAX_BYTES`, :data:`MAX_COLUMNS` and
``max_rows``. Each problem raises :class:`uqcore.exceptions.InputError` naming the file and the row
or column, so the user can fix it; nothing is modified or written.
"""

from __future__ import annotations

import io
import os
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.csv as pacsv
import pyarrow.parquet as pq

from uqcore.exceptions import InputError
from uqcore.untrusted import iter_jsonl

MAX_BYTES = 2 * 2**30  # a file larger than this is refused unread
MAX_COLUMNS = 1000
MAX_HEADER_BYTES = 1 << 20  # a CSV/TSV first line longer than this is refused unread
MAX_JSONL_VALUES = 100_000_000  # values in a JSON lines file given by path (an operator's)
JSONL_VALUES_PER_ROW = 100  # ... and a row's share when the caller bounds the rows (an upload)
SUFFIXES = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".jsonl": "jsonl",
    ".json": "jsonl",
    ".parquet": "parquet",
}


@dataclass(frozen=True)
class Labelled:
    """``texts[i]`` has label id ``labels[i]``; ``where`` names the file."""

    texts: tuple[str, ...]
    labels: tuple[int, ...]
    where: str

    def __len__(self) -> int:
        return len(self.texts)


def kind_of(path: Path) -> str:
    """``csv``, ``tsv``, ``jsonl``, ``parquet`` or ``datasets`` (a ``save_to_disk`` folder)."""
    if path.is_dir():
        if (path / "dataset_info.json").is_file() or (path / "state.json").is_file():
            return "datasets"
        raise InputError(
            f"{path.name} is a folder but not one datasets' save_to_disk wrote "
            "(no state.json); give a file or such a folder."
        )
    kind = SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise InputError(
            f"{path.name}: unknown file type {path.suffix!r}; use .csv, .tsv, "
            ".jsonl, .parquet or a datasets folder."
        )
    return kind


def read_table(
    source: str | os.PathLike | bytes,
    kind: str | None = None,
    name: str = "the file",
    max_rows: int | None = None,
) -> pa.Table:
    """The whole table of a file (a path, or its bytes with ``kind``), within the bounds; JSON
    lines of more than ``max_rows`` rows are refused before they are parsed."""
    if isinstance(source, bytes | bytearray):
        if kind is None:
            raise InputError("Give the file type of uploaded bytes.")
        size, where, handle = len(source), name, io.BytesIO(source)
    else:
        path = Path(source)
        if path.is_symlink():
            raise InputError(f"{path.name} is a link; links are not followed.")
        if not path.exists():
            raise InputError(f"{path} does not exist; check the path in the task file.")
        kind = kind or kind_of(path)
        where = path.name
        if kind == "datasets":
            return _from_datasets(path)
        size, handle = path.stat().st_size, path
    if size > MAX_BYTES:
        raise InputError(
            f"{where} has {size / 2**30:.1f} GB; the most read is {MAX_BYTES / 2**30:.0f} GB."
        )
    if size == 0:
        raise InputError(f"{where} is empty.")
    try:
        if kind in ("csv", "tsv"):
            _check_header(handle, where, "\t" if kind == "tsv" else ",")
            opts = pacsv.ParseOptions(
                delimiter="\t" if kind == "tsv" else ",", newlines_in_values=True
            )
            convert = pacsv.ConvertOptions(strings_can_be_null=False)
            table = pacsv.read_csv(handle, parse_options=opts, convert_options=convert)
            binary = [f.name for f in table.schema if pa.types.is_binary(f.type)]
            if binary:  # pyarrow keeps bytes that are not UTF-8 as binary
                raise InputError(
                    f"{where} is not UTF-8 text (column {binary[0]!r}); save it as UTF-8."
                )
            return table
        if kind == "jsonl":
            return _jsonl(handle, where, max_rows)
        if kind == "parquet":
            meta = pq.ParquetFile(handle).metadata
            if meta.num_columns > MAX_COLUMNS:
                raise InputError(
                    f"{where} has {meta.num_columns:,} columns; at most {MAX_COLUMNS}."
                )
            if isinstance(handle, io.BytesIO):
                handle.seek(0)
            return pq.read_table(handle)
    except InputError:
        raise
    except UnicodeDecodeError:
        raise InputError(f"{where} is not UTF-8 text; save it as UTF-8.") from None
    except (pa.ArrowInvalid, pa.ArrowTypeError, OSError, ValueError) as exc:
        text = str(exc).split("\n")[0][:200]
        if "utf8" in text.lower() or "utf-8" in text.lower():
            raise InputError(f"{where} is not UTF-8 text; save it as UTF-8.") from None
        raise InputError(f"{where} cannot be read as {kind.upper()}: {text}") from None
    raise InputError(f"{where}: unknown file type {kind!r}.")


def _check_header(handle, where: str, sep: str) -> None:
    """Refuse a CSV/TSV whose first line is huge or has too many columns, before parsing."""
    if isinstance(handle, io.BytesIO):
        first = handle.getvalue()[: MAX_HEADER_BYTES + 1].split(b"\n", 1)[0]
    else:
        with open(handle, "rb") as fh:
            first = fh.read(MAX_HEADER_BYTES + 1).split(b"\n", 1)[0]
    if len(first) > MAX_HEADER_BYTES or first.count(sep.encode()) + 1 > MAX_COLUMNS:
        raise InputError(
            f"{where} has more than {MAX_COLUMNS} columns (or a first line over "
            f"{MAX_HEADER_BYTES >> 20} MB); a labelled file needs a text and a "
            "label column."
        )
    try:
        first.decode("utf-8")
    except UnicodeDecodeError:
        raise InputError(f"{where} is not UTF-8 text; save it as UTF-8.") from None


def _jsonl(handle, where: str, max_rows: int | None = None) -> pa.Table:
    """JSON lines, one object per line, read by :func:`uqcore.untrusted.iter_jsonl` (UTF-8, each
    line's depth, the values of the file: :data:`MAX_JSONL_VALUES`, or
    :data:`JSONL_VALUES_PER_ROW` a row given ``max_rows``), rows named in the messages."""
    data = handle.getvalue() if isinstance(handle, io.BytesIO) else Path(handle).read_bytes()
    values = MAX_JSONL_VALUES if max_rows is None else max_rows * JSONL_VALUES_PER_ROW
    rows = []
    for n, row in iter_jsonl(
        data, what=where, max_bytes=MAX_BYTES, max_items=values, max_lines=max_rows
    ):
        if not isinstance(row, dict):
            raise InputError(f"{where}, line {n}: not a JSON object.")
        if len(row) > MAX_COLUMNS:
            raise InputError(f"{where}, line {n}: {len(row):,} keys; at most {MAX_COLUMNS}.")
        rows.append(row)
    if not rows:
        raise InputError(f"{where} holds no rows.")
    columns = list(dict.fromkeys(k for r in rows for k in r))
    return pa.table({c: _column([r.get(c) for r in rows]) for c in columns})


def _column(values: list) -> pa.Array:
    """One JSON column; mixed kinds (labels given as ids on some lines, names on others)
    become text, which :func:`labelled` reads either way."""
    try:
        return pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):
        return pa.array([None if v is None else str(v) for v in values], type=pa.string())


def _from_datasets(path: Path) -> pa.Table:
    try:
        import datasets  # late: optional and heavy, only for a saved Hugging Face dataset

        ds = datasets.load_from_disk(str(path))
    except Exception as exc:  # datasets raises its own types
        raise InputError(
            f"{path.name} cannot be read with datasets.load_from_disk ({type(exc).__name__})."
        ) from None
    if isinstance(ds, datasets.DatasetDict):
        raise InputError(
            f"{path.name} holds several splits ({', '.join(ds)}); point at one split's folder."
        )
    return ds.with_format("arrow")[:]


def labelled(
    table: pa.Table,
    text_column: str,
    label_column: str,
    label_names: tuple[str, ...],
    where: str,
    max_rows: int | None = None,
) -> Labelled:
    """The texts and label ids of ``table``; labels may be ids ``0..C-1`` or label names."""
    names = list(table.column_names)
    if len(names) > MAX_COLUMNS:
        raise InputError(f"{where} has {len(names):,} columns; at most {MAX_COLUMNS}.")
    for what, col in (("text", text_column), ("label", label_column)):
        if col not in names:
            shown = ", ".join(repr(n) for n in names[:12]) + (" ..." if len(names) > 12 else "")
            raise InputError(f"{where} has no {what} column {col!r}; its columns: {shown}.")
    if pa.types.is_binary(table.schema.field(text_column).type) or pa.types.is_large_binary(
        table.schema.field(text_column).type
    ):
        raise InputError(f"{where} is not UTF-8 text (column {text_column!r}); save it as UTF-8.")
    n = table.num_rows
    if n == 0:
        raise InputError(f"{where} is empty (0 rows).")
    if max_rows is not None and n > max_rows:
        raise InputError(f"{where} has {n:,} rows; at most {max_rows:,} here.")
    texts = table.column(text_column).to_pylist()
    raw = table.column(label_column).to_pylist()
    by_name = {str(name).lower(): i for i, name in enumerate(label_names)}
    labels = []
    for row, (t, y) in enumerate(zip(texts, raw, strict=True), start=1):
        if not isinstance(t, str) or not t.strip():
            raise InputError(
                f"{where}, row {row}: the text ({text_column!r}) is empty or not text."
            )
        labels.append(_label(y, by_name, label_names, where, row, label_column))
    return Labelled(tuple(texts), tuple(labels), where)


def _label(
    y, by_name: dict[str, int], names: tuple[str, ...], where: str, row: int, column: str
) -> int:
    if isinstance(y, bool):
        y = int(y)
    if isinstance(y, int) and 0 <= y < len(names):
        return y
    if isinstance(y, float) and y.is_integer() and 0 <= y < len(names):
        return int(y)
    if isinstance(y, str):
        key = y.strip().lower()
        if key in by_name:
            return by_name[key]
        if key.isdigit() and int(key) < len(names):
            return int(key)
    raise InputError(
        f"{where}, row {row}: label {str(y)[:40]!r} in {column!r} is none of "
        f"{', '.join(names)} (or their ids 0-{len(names) - 1})."
    )


def read_labelled(
    path: str | os.PathLike,
    text_column: str,
    label_column: str,
    label_names: tuple[str, ...],
    max_rows: int | None = None,
) -> Labelled:
    """:func:`read_table` then :func:`labelled`: one file's texts and label ids, checked."""
    path = Path(path)
    return labelled(read_table(path), text_column, label_column, label_names, path.name, max_rows)
