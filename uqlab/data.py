"""Datasets with the paper's splits: IMDB (CR test as its OOD set) and CoLA.

Sources: a local folder laid out like ``../shared/data`` (``--data-dir``, else ``$UQ_DATA_DIR``),
read with pyarrow (no ``datasets``, no cache, no network); else the Hugging Face
Hub (``stanfordnlp/imdb``; ``nyu-mll/glue`` config ``cola``). CR has no Hub copy, so on the Hub path
IMDB's OOD set is ``assets/eval/cr_test.parquet``. Assumption: the Hub's CoLA ``validation`` (1,043
rows) is in_domain_dev (its first 527 rows) followed by out_of_domain_dev (its last 516), as in the
GLUE release; the row count is checked.

Splits are deterministic: ``rng = numpy.random.default_rng(split_seed)`` and, in this order,
- IMDB: ``p = rng.permutation(n)`` of the n = 25,000 training reviews; dev = the last round(n / 10)
  = 2,500 of ``p``, train = the first 22,500. test = the 25,000 test reviews, ood = CR test (500),
  each reordered by the next ``rng.permutation``.
- CoLA: pool = in_domain_train (8,551) then in_domain_dev (527), n = 9,078, ``p = rng.permutation``;
  test = round(0.2 n) = 1,816, dev = round(0.1 n) = 908 (halves round up), train = the rest = 6,354;
  train, dev, test are consecutive slices of ``p``. ood = out_of_domain_dev (516), next permutation.
Test and OOD are shuffled only so that ``limit`` (the first ``limit`` rows of every split) mixes
labels. Row order of the Hub's IMDB differs from the local files, so its splits differ too.
Texts are kept exactly as stored (``uqcore.text.vocab`` handles ``<br />``).

CLI: ``python -m uqlab.data export-eval --data-dir ../shared/data --out assets/eval``.
"""

from __future__ import annotations

import argparse
import os
from dataclasses import dataclass
from fractions import Fraction
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from uqcore.exceptions import InputError
from uqlab.catalog.paths import EVAL_DIR
from uqlab.catalog.sentences import review_sentences
from uqlab.catalog.task_file import read_split, resolve
from uqlab.catalog.tasks import (
    OOD_COLUMNS,
    TASK_NAMES,
    TaskSpec,
    eval_subset_domains,
    sentence_sets,
)
from uqlab.catalog.tasks import TASKS as TASK_TABLE

_SPLIT_OF = {"id": "test", "ood": "ood"}  # domain key -> the split that holds it

DATA_ENV = "UQ_DATA_DIR"
TASKS = TASK_NAMES
HINT = (
    f"set {DATA_ENV} or pass --data-dir pointing at a folder laid out like ../shared/data: "
    + ", ".join(spec.layout for spec in TASK_TABLE.values() if spec.builtin)
)
# file stem -> the name of its Split: "test" (in-domain) or "ood"
EVAL_SUBSETS = {stem: _SPLIT_OF[d] for stem, d in eval_subset_domains().items()}
EVAL_COMMAND = "python -m uqlab.data export-eval --data-dir ../shared/data --out assets/eval"
EVAL_SCHEMA = pa.schema([("text", pa.string()), ("label", pa.int64()), ("domain", pa.string())])
_Dir = str | os.PathLike | None
_Rows = tuple[tuple[str, ...], tuple[int, ...]]


@dataclass(frozen=True)
class Split:
    """One split: ``texts[i]`` has label id ``labels[i]`` (0..C-1)."""

    name: str  # "train", "dev", "test", "ood"
    texts: tuple[str, ...]
    labels: tuple[int, ...]

    def __len__(self) -> int:
        return len(self.texts)


@dataclass(frozen=True)
class TaskData:
    """All splits of a task; ``metric`` on ``dev`` drives early stopping."""

    task: str  # a key of uqlab.catalog.tasks.TASKS
    label_names: tuple[str, ...]
    metric: str  # "accuracy" or "mcc"
    train: Split
    dev: Split
    test: Split
    ood: Split
    source: str  # the local folder path, or "hub"
    # out-of-domain texts cut to the in-domain texts' form (the description's ``ood_matched``:
    # for the length-matched OOD figure), in file order; empty when it names none
    ood_matched: Split = Split("ood_matched", (), ())


def resolve_data_dir(flag: _Dir = None) -> Path | None:
    """The CLI flag if given, else ``$UQ_DATA_DIR``, else None (meaning: try the Hub)."""
    value = flag if flag not in (None, "") else os.environ.get(DATA_ENV) or None
    return None if value is None else Path(value).expanduser()


def _part(fraction: float, n: int) -> int:
    """``round(fraction * n)`` with halves up, exactly (``Fraction`` of the decimal)."""
    return int(Fraction(str(fraction)) * n + Fraction(1, 2))


def _split_from(spec: TaskSpec, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """train/dev (and test, when ``spec.test_in_pool``) positions in a pool of ``n`` rows: one
    permutation, train first, then dev, then test, their sizes the description's fractions of
    ``n`` (halves up: CoLA 0.1 and 0.2, IMDB 0.1)."""
    split = spec.description["data"].get("split", {"dev": 0.1, "test": 0.2})
    p = rng.permutation(n)
    n_test = _part(split["test"], n) if spec.test_in_pool else 0
    n_train = n - _part(split["dev"], n) - n_test
    out = {"train": p[:n_train], "dev": p[n_train : n - n_test]}
    return out | ({"test": p[n - n_test :]} if spec.test_in_pool else {})


def split_positions(task: str, n: int, split_seed: int = 0) -> dict[str, np.ndarray]:
    """Positions in the pool (IMDB train file; CoLA train + validation), as load_task draws."""
    return _split_from(_check_task(task), n, np.random.default_rng(split_seed))


def _check_task(task: str) -> TaskSpec:
    if task not in TASK_TABLE:
        raise InputError(
            f"unknown task {task!r}: choose one of {', '.join(TASK_TABLE)} or "
            "describe yours in a task file (--task-file)"
        )
    return TASK_TABLE[task]


def _rows(where: str, text_col: str, names: list[str], get, n_labels: int = 2) -> _Rows:
    """Texts and labels from a table with columns ``names`` (``get(col)`` -> list), validated."""
    if text_col not in names or "label" not in names:
        raise InputError(f"{where} has columns {names}; expected {text_col!r} and 'label' ({HINT})")
    texts, labels = get(text_col), get("label")
    if not texts:
        raise InputError(f"{where} is an empty split (0 rows); {HINT}")
    ids = range(n_labels)
    bad = sorted({repr(v) for v in labels if v not in ids or isinstance(v, float)})
    if bad:
        allowed = ", ".join(map(str, ids)) if n_labels <= 4 else f"0, ..., {n_labels - 1}"
        raise InputError(
            f"{where} has labels outside {{{allowed}}}: {', '.join(bad[:5])}; fix the file"
        )
    if any(not isinstance(t, str) for t in texts):
        raise InputError(f"{where} has missing or non-string texts in column {text_col!r}")
    return tuple(texts), tuple(int(v) for v in labels)


def _from_dataset(ds, where: str, text_col: str) -> _Rows:
    arrow = ds.with_format("arrow")  # column access without per-row decoding
    return _rows(where, text_col, list(ds.column_names), lambda c: arrow[c].to_pylist())


def _datasets():
    """Import ``datasets`` lazily (the Hub only: local files are read with pyarrow)."""
    import datasets

    datasets.disable_progress_bars()
    return datasets


def _read_local(path: Path, text_col: str, n_labels: int = 2) -> _Rows:
    if not path.is_file():
        raise InputError(f"missing split file: expected {path}; {HINT}")
    try:
        rows = pq.ParquetFile(path).metadata.num_rows
    except Exception as exc:
        raise InputError(f"{path} is not a readable Parquet file ({exc}); {HINT}") from exc
    if rows == 0:
        raise InputError(f"{path} is an empty split (0 rows); {HINT}")
    try:  # pyarrow directly: a local file needs neither `datasets` nor its cache
        table = pq.read_table(path)
    except Exception as exc:
        raise InputError(f"{path} is not a readable Parquet file ({exc}); {HINT}") from exc
    names = list(table.column_names)
    return _rows(str(path), text_col, names, lambda c: table.column(c).to_pylist(), n_labels)


def _read_hub(spec: TaskSpec) -> tuple[_Rows, _Rows, _Rows]:
    """The task's rows from the Hub as ``(first, second, ood)``: the pool's two parts (CoLA,
    test in the pool) or the pool and the test split (IMDB); offline is checked first."""
    env = ("HF_HUB_OFFLINE", "HF_DATASETS_OFFLINE")
    if any(os.environ.get(k, "").strip().lower() in ("1", "true", "yes", "on") for k in env):
        raise InputError(f"no data folder given and the Hugging Face Hub is offline ({HINT})")
    hub, task = spec.hub, spec.name
    try:
        load = _datasets().load_dataset
        ood = load_eval_subset(hub.ood_subset) if hub.ood_subset else None
        config = (hub.config,) if hub.config else ()
        first, second = (load(hub.path, *config, split=s) for s in hub.splits)
    except InputError:
        raise
    except Exception as exc:
        raise InputError(f"could not load {task} from the Hub ({exc}); {HINT}") from exc
    if ood is not None:
        col = spec.text_column
        rows = (_from_dataset(d, f"hub {task} {d.split}", col) for d in (first, second))
        return *rows, (ood.texts, ood.labels)
    k, n_ood = hub.ood_tail
    if len(second) != k + n_ood:
        raise InputError(
            f"hub {spec.short} {hub.splits[1]} has {len(second)} rows, not {k} + {n_ood}; {HINT}"
        )
    texts, labels = _from_dataset(second, f"hub {task} {hub.splits[1]}", spec.text_column)
    train_rows = _from_dataset(first, f"hub {task} {hub.splits[0]}", spec.text_column)
    return train_rows, (texts[:k], labels[:k]), (texts[k:], labels[k:])


def _take(name: str, rows: _Rows, idx, limit: int | None = None) -> Split:
    idx = np.asarray(idx)[:limit].tolist()
    return Split(name, tuple(rows[0][i] for i in idx), tuple(rows[1][i] for i in idx))


def load_task(
    task: str, data_dir: _Dir = None, *, split_seed: int = 0, limit: int | None = None
) -> TaskData:
    """Load ``task`` with the paper's splits (the exact rule is in the module docstring).

    ``data_dir`` goes through :func:`resolve_data_dir`; None (and no ``$UQ_DATA_DIR``) means the
    Hub. ``limit`` caps every split at its first ``limit`` rows after shuffling. Every problem
    with the data raises :class:`InputError`, before anything is trained.
    """
    spec = _check_task(task)
    if limit is not None and (
        isinstance(limit, bool) or not isinstance(limit, int | np.integer) or limit < 1
    ):
        raise InputError(f"limit must be a positive integer or None, got {limit!r}")
    folder = resolve_data_dir(data_dir)
    if folder is not None and not folder.is_dir():
        given = "--data-dir" if data_dir not in (None, "") else DATA_ENV
        raise InputError(f"data folder {folder} (from {given}) does not exist; {_hint(spec)}")
    data, ood_doc = spec.description["data"], spec.description.get("ood")
    seed = data.get("seed", split_seed)
    rng = np.random.default_rng(seed)
    if folder is None and spec.hub is not None:
        first, second, ood = _read_hub(spec)
        pool = (first[0] + second[0], first[1] + second[1]) if spec.test_in_pool else first
        test = None if spec.test_in_pool else second
    elif "train" in data:  # three files: train and dev as they are, test and ood shuffled
        rows = {k: _read_split(spec, data[k], folder) for k in ("train", "dev", "test")}
        splits = {k: _take(k, rows[k], np.arange(len(rows[k][0])), limit) for k in ("train", "dev")}
        splits["test"] = _take("test", rows["test"], rng.permutation(len(rows["test"][0])), limit)
        return _with_ood(spec, splits, _ood_rows(spec, ood_doc, folder), rng, limit, folder)
    else:
        parts = [_read_split(spec, f, folder) for f in data.get("pool") or [data["file"]]]
        pool = (sum((t for t, _ in parts), ()), sum((y for _, y in parts), ()))
        test = None if spec.test_in_pool else _read_split(spec, data["test"], folder)
        ood = _ood_rows(spec, ood_doc, folder)
    n = len(pool[0])
    if (
        not spec.builtin
        and spec.test_in_pool
        and min(_part(f, n) for f in data.get("split", {}).values()) < 1
    ):
        raise InputError(
            f"{spec.name}: the pool has {n} rows, too few for a train, dev and "
            "test split with these fractions; give more rows."
        )
    pos = _split_from(spec, n, rng)
    if test is not None:
        pos["test"] = rng.permutation(len(test[0]))
    splits = {s: _take(s, pool, pos[s], limit) for s in ("train", "dev")}
    splits["test"] = _take("test", pool if test is None else test, pos["test"], limit)
    return _with_ood(spec, splits, ood, rng, limit, folder)


def _with_ood(spec, splits, ood, rng, limit, folder) -> TaskData:
    """The task's data with its OOD rows (shuffled by the next permutation; none: empty)."""
    splits["ood"] = (
        Split("ood", (), ())
        if ood is None
        else _take("ood", ood, rng.permutation(len(ood[0])), limit)
    )
    source = (
        "hub"
        if folder is None and spec.hub is not None
        else str(folder or spec.description["base"])
    )
    matched = spec.description.get("ood_matched")
    if matched:
        rows = _ood_rows(spec, matched, folder)
        splits["ood_matched"] = _take("ood_matched", rows, np.arange(len(rows[0])), limit)
    return TaskData(spec.name, spec.label_names, spec.metric, **splits, source=source)


def _ood_rows(spec: TaskSpec, ood_doc, folder) -> _Rows | None:
    """The out-of-domain file's rows, read by its own columns when it names them."""
    if not ood_doc:
        return None
    columns = {k: ood_doc[k] for k in OOD_COLUMNS if k in ood_doc}
    return _read_split(spec, ood_doc["file"], folder, **columns)


def _read_split(
    spec: TaskSpec,
    value: str,
    folder: Path | None,
    text_column: str | None = None,
    label_column: str | None = None,
) -> _Rows:
    """One file of the description (by the task's columns unless others are given): a built-in
    task's Parquet through the strict reader whose messages name the data folder's layout; any
    other through :mod:`uqlab.catalog.labelled`."""
    if folder is None and value.startswith("${data}"):
        raise InputError(f"no data folder given and {spec.name} has no Hub copy; {_hint(spec)}")
    path = resolve(spec, value, folder)
    text_column = text_column or spec.text_column
    if spec.builtin and path.suffix == ".parquet" and label_column is None:
        return _read_local(path, text_column, len(spec.label_names))
    rows = read_split(spec, value, folder, text_column, label_column)
    return rows.texts, rows.labels


def _hint(spec: TaskSpec) -> str:
    return HINT if spec.builtin else f"check the files named in {spec.name}'s task description"


def load_eval_subset(name: str, eval_dir: _Dir = None) -> Split:
    """One shipped evaluation subset, ``assets/eval/<name>.parquet``, as a :class:`Split`.

    ``name`` is one of ``EVAL_SUBSETS``; ``Split.name`` is "test" (in-domain) or "ood".
    """
    stem = name.removesuffix(".parquet")
    if stem not in EVAL_SUBSETS:
        names = ", ".join(EVAL_SUBSETS)
        raise InputError(f"unknown evaluation subset {name!r}: choose one of {names}")
    path = Path(eval_dir if eval_dir is not None else EVAL_DIR) / f"{stem}.parquet"
    redo = f"recreate it with `{EVAL_COMMAND}`"
    if not path.is_file():
        raise InputError(f"evaluation subset missing: expected {path}; {redo}")
    try:
        table = pq.read_table(path)
    except Exception as exc:
        raise InputError(f"{path} is not a readable Parquet file ({exc}); {redo}") from exc
    texts, labels = _rows(str(path), "text", table.column_names, lambda c: table[c].to_pylist())
    return Split(EVAL_SUBSETS[stem], texts, labels)


def task_examples(task: str) -> dict[str, tuple[str, Split]]:
    """The examples a task's dataset pages show, by domain key: ``(name, split)``. A built-in
    task's bundled subsets (``assets/eval``); a described task's ``examples`` files (its
    description: ``{"id": PATH, "ood": PATH}``, each named by its file stem), or none."""
    spec = _check_task(task)
    if spec.builtin:
        return {d: (stem, load_eval_subset(stem)) for d, stem in spec.eval_subsets.items()}
    out = {}
    ood_doc = spec.description.get("ood") or {}
    for domain, value in (spec.description.get("examples") or {}).items():
        own = {k: ood_doc[k] for k in OOD_COLUMNS if k in ood_doc and domain == "ood"}
        rows = _read_split(spec, value, resolve_data_dir(None), **own)
        out[domain] = (Path(value).stem, Split("test" if domain == "id" else "ood", *rows))
    return out


def export_eval_subsets(
    data_dir: _Dir, out_dir: str | os.PathLike, *, split_seed: int = 0, id_sample: int = 500
) -> dict[str, int]:
    """Write the app's evaluation subsets (Parquet, zstd, columns text/label/domain), for every
    task of :mod:`uqlab.catalog.tasks` (``TaskSpec.eval_subsets``: domain -> file stem).

    In-domain: the task's test split in split order (CoLA), or with ``eval_id_sample`` the first
    ``id_sample / 2`` rows of each label of the shuffled test split (so chosen by
    ``split_seed``), in that order (IMDB). Out-of-domain: the whole OOD file in stored order
    (cola_ood, cr_test). Returns the row count of each file (keyed by file stem).
    """
    if id_sample < 2 or id_sample % 2:
        raise InputError(f"id_sample must be a positive even number, got {id_sample}")
    folder = resolve_data_dir(data_dir)
    if folder is None:
        raise InputError(f"export-eval needs a local data folder; {HINT}")
    subsets: dict[str, tuple[Split, str]] = {}
    for spec in (s for s in TASK_TABLE.values() if s.eval_subsets):
        test = load_task(spec.name, folder, split_seed=split_seed).test
        if spec.eval_id_sample:
            labels = np.asarray(test.labels)
            by_label = [np.flatnonzero(labels == y)[: id_sample // 2] for y in (0, 1)]
            test = _take("test", (test.texts, test.labels), np.sort(np.concatenate(by_label)))
        ood = Split("ood", *_ood_rows(spec, spec.description["ood"], folder))
        subsets[spec.eval_subsets["id"]] = (test, "id")
        subsets[spec.eval_subsets["ood"]] = (ood, "ood")
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    for stem, (split, domain) in subsets.items():
        cols = {"text": split.texts, "label": split.labels, "domain": [domain] * len(split)}
        table = pa.Table.from_pydict(cols, schema=EVAL_SCHEMA)
        pq.write_table(table, out / f"{stem}.parquet", compression="zstd", compression_level=19)
    return {stem: len(split) for stem, (split, _) in subsets.items()}


# a bundled review set -> the file of its sentences (uqlab.catalog.sentences), both in assets/eval
SENTENCE_SETS = sentence_sets()


def export_sentences(eval_dir: str | os.PathLike) -> dict[str, int]:
    """Write each review set of :data:`SENTENCE_SETS` cut into sentences (two a review, seed 0:
    :func:`uqlab.catalog.sentences.review_sentences`) beside it, domain ``"ood"``; the same
    inputs give the same rows. Returns the row count of each file written (by file stem)."""
    folder = Path(eval_dir)
    counts = {}
    for source, stem in SENTENCE_SETS.items():
        reviews = load_eval_subset(source, folder)
        texts, labels = review_sentences(reviews.texts, reviews.labels)
        cols = {"text": texts, "label": labels, "domain": ["ood"] * len(texts)}
        table = pa.Table.from_pydict(cols, schema=EVAL_SCHEMA)
        pq.write_table(table, folder / f"{stem}.parquet", compression="zstd", compression_level=19)
        counts[stem] = len(texts)
    return counts


def _export_sentences(folder: Path) -> int:
    for stem, n in export_sentences(folder).items():
        path = folder / f"{stem}.parquet"
        print(f"{path}: {n} sentences, {path.stat().st_size:,} bytes")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m uqlab.data", description="the tasks' datasets (uqlab.catalog.tasks)"
    )
    sub = parser.add_subparsers(dest="command", required=True)
    exp = sub.add_parser("export-eval", help="write the evaluation subsets of assets/eval")
    exp.add_argument("--data-dir", default=None, help=f"data folder (default: ${DATA_ENV})")
    exp.add_argument("--out", default=str(EVAL_DIR), help="output folder (default: assets/eval)")
    exp.add_argument("--split-seed", type=int, default=0)
    exp.add_argument("--id-sample", type=int, default=500)
    cut = sub.add_parser(
        "export-sentences", help="write each bundled review set cut into sentences (assets/eval)"
    )
    cut.add_argument("--eval-dir", default=str(EVAL_DIR), help="folder of the bundled subsets")
    args = parser.parse_args(argv)
    if args.command == "export-sentences":
        return _export_sentences(Path(args.eval_dir))
    try:
        counts = export_eval_subsets(
            args.data_dir, args.out, split_seed=args.split_seed, id_sample=args.id_sample
        )
    except InputError as exc:
        parser.exit(2, f"error: {exc}\n")
    for stem, n in counts.items():
        path = Path(args.out) / f"{stem}.parquet"
        print(f"{path}: {n} rows, {path.stat().st_size:,} bytes")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
