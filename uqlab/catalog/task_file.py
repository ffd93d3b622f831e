"""A task described by a file: ``--task-file T.json`` for ``python -m uqlab.train`` and
``python -m uqlab.evaluate``.

A description is a JSON object::

    {"name": "cr", "title": "CR sentiment", "short": "CR",
     "text_column": "text", "label_column": "label", "label_names": ["neg", "pos"],
     "metric": "accuracy",
     "data": {"train": "${data}/cr/train.parquet", "dev": "${data}/cr/validation.parquet",
              "test": "${data}/cr/test.parquet"},
     "ood": {"file": "${data}/imdb/test.parquet", "name": "IMDB"},
     "train_defaults": {...}}

An ``ood`` file whose columns are named otherwise says so: ``"ood": {"file": "reviews.csv",
"name": "IMDB", "text_column": "review", "label_column": "sentiment"}``. ``ood_matched``
(optional, the same form) names out-of-domain texts cut to the in-domain texts' form (reviews cut
into sentences where the in-domain texts are sentences: :mod:`uqlab.catalog.sentences`), which
``python -m uqlab.evaluate`` draws to the in-domain length histogram for its OOD figure at equal
length.

``data`` is either three files (``train``, ``dev``, ``test``) or one file with split fractions
and a seed: ``{"file": "all.csv", "split": {"dev": 0.1, "test": 0.2}, "seed": 0}``. ``ood`` is
optional. Files may be CSV, TSV, JSON lines, Parquet or a ``datasets`` ``save_to_disk`` folder
(:mod:`uqlab.catalog.labelled`); a path is relative to the description's folder, and ``${data}``
stands for the data folder (``--data-dir`` or ``$UQ_DATA_DIR``). Labels are ids ``0..C-1`` or label
names. ``metric``: ``accuracy`` (default for two classes), ``mcc`` (two classes) or
``macro_f1`` (default for more). ``train_defaults``: what a training config starts from (the
model's shape, the learning rate...; default: the word-level CoLA recipe). ``label_words``
(optional): ``{"instruction": "Is this review negative or positive?", "words": ["negative",
"positive"]}``, what :mod:`uqlab.label_words` asks an instruction model by default.

:func:`read_task_file` checks the description (unknown keys, missing fields, labels, metric,
paths) and returns a :class:`uqlab.catalog.tasks.TaskSpec` registered in the task table
(:func:`uqlab.catalog.tasks.register`), so every other module reads it as it reads the built-in
tasks, which are descriptions too (``uqlab/catalog/task_files``; they may also name a pool of files,
their Hub copy and their bundled evaluation subsets).
A checkpoint trained on it keeps the description in ``training.task_spec``
(:func:`register_from_training`), so evaluating or opening it needs no file.
"""

from __future__ import annotations

import os
from pathlib import Path

from uqcore.exceptions import ConfigError, InputError
from uqcore.untrusted import read_json_file
from uqlab.catalog.labelled import Labelled, read_labelled
from uqlab.catalog.paths import REPO_ROOT
from uqlab.catalog.tasks import PATH_KEYS, TASKS, TaskSpec, describe, register

DATA = "${data}"  # stands for the data folder (--data-dir or UQ_DATA_DIR) in a path
TASK_FILE_BYTES = 1 << 20  # a task description is a small JSON: a larger file is refused unread


def read_task_file(path: str | os.PathLike) -> TaskSpec:
    """Read, check and register the description at ``path``; :class:`ConfigError` naming the
    file and what is wrong."""
    path = Path(path)
    try:  # size, UTF-8, depth, width and syntax: uqcore.untrusted's one-line messages
        doc = read_json_file(path, max_bytes=TASK_FILE_BYTES, error=ConfigError)
    except FileNotFoundError:
        raise ConfigError(f"No task file at {path}.") from None
    except OSError as exc:  # a folder, no permission...
        raise ConfigError(
            f"{path.name} cannot be read ({exc.strerror or type(exc).__name__}); "
            "give a task description file."
        ) from None
    return register(describe(doc, portable(path.resolve().parent), path.name))


REPO = "repo:"  # a base inside this repository, kept relative so a clone elsewhere reads it


def portable(folder: Path) -> str:
    """A description's base folder as stored in a checkpoint: ``repo:<path>`` inside this
    repository (a shipped example still reads its files from another clone), else absolute."""
    try:
        return REPO + folder.relative_to(REPO_ROOT).as_posix()
    except ValueError:
        return str(folder)


def base_of(spec: TaskSpec) -> Path:
    """The folder a description's relative paths start from."""
    base = str(spec.description["base"])
    return REPO_ROOT / base[len(REPO) :] if base.startswith(REPO) else Path(base)


def resolve(spec: TaskSpec, value: str, data_dir: Path | None) -> Path:
    """A path of the description: ``${data}`` is the data folder, relative paths start at the
    description's folder."""
    if value.startswith(DATA):
        if data_dir is None:
            raise InputError(
                f"Task {spec.name!r} reads {value}: give the data folder "
                "(--data-dir or UQ_DATA_DIR)."
            )
        return Path(data_dir) / value[len(DATA) :].lstrip("/\\")
    path = Path(value).expanduser()
    return path if path.is_absolute() else base_of(spec) / path


def read_split(
    spec: TaskSpec,
    value: str,
    data_dir: Path | None,
    text_column: str | None = None,
    label_column: str | None = None,
) -> Labelled:
    """One file of the description, by the task's columns unless others are given (an
    out-of-domain file may name its own)."""
    return read_labelled(
        resolve(spec, value, data_dir),
        text_column or spec.text_column,
        label_column or spec.label_column,
        spec.label_names,
    )


def register_from_training(training: dict | None) -> str | None:
    """Register the task a checkpoint's training info describes (``task_spec``), if any; return
    the task's name (None when the checkpoint names none). For checkpoints the operator placed
    (the checkpoint folder, a command line): never call it on an upload (:func:`data_free`).
    A description without ``data`` (an upload's, kept data-free) is not registered."""
    training = training or {}
    doc = training.get("task_spec")
    if isinstance(doc, dict) and "data" in doc and doc.get("name") not in TASKS:  # a file wins
        register(describe(doc, Path(doc.get("base", ".")), "the checkpoint's task_spec"))
    task = training.get("task")
    return task if isinstance(task, str) else None


def checkpoint_task(
    name: str, training: dict | None, task_file: str | os.PathLike | None = None
) -> tuple[str, str | None]:
    """The task a command runs a checkpoint on, and a note to print (None when there is
    nothing to say): the checkpoint's own task (its ``training.task``, described by its
    ``task_spec`` when not built in) unless ``task_file`` is given. A task file for the same
    task replaces the kept description (its files may have moved: noted when the two differ);
    a task file for a checkpoint that names no task (an import without one) gives it that
    task (noted). A task file for *another* task is refused (:class:`ConfigError`): a
    checkpoint's classes mean its own task's labels."""
    own = register_from_training(training)
    if task_file is None:
        if own is None:
            raise ConfigError(
                f"{name} names no task (config.json has no training.task); give its task with "
                "--task-file T.json."
            )
        return own, None
    kept = (training or {}).get("task_spec")
    spec = read_task_file(task_file)
    if own is None:
        return spec.name, f"{name} names no task: using {Path(task_file).name} ({spec.name})."
    if spec.name != own:
        raise ConfigError(
            f"{name} was trained on task {own!r} but {Path(task_file).name} describes "
            f"{spec.name!r}; leave out --task-file to use the checkpoint's own task, or give "
            f"the description of {own!r}."
        )
    if isinstance(kept, dict) and kept != spec.description:
        return own, (
            f"{Path(task_file).name} describes {own!r} differently from the copy kept in "
            f"{name}'s config.json: using the file's (its data files)."
        )
    return own, None


DATA_FREE_KEYS = (
    "name",
    "title",
    "short",
    "text_column",
    "label_column",
    "label_names",
    "metric",
    "notes",
    "label_words",
)


def data_free(doc: dict) -> tuple[dict, list[str]]:
    """The fields of a task description ``doc`` that name no file (its name, titles, columns,
    labels, metric, notes) and the keys of it that named files
    (:data:`uqlab.catalog.tasks.PATH_KEYS`: ``data``, ``ood``, ``examples``, ``base``), left out
    with the rest (``train_defaults``...). An upload keeps only these: what a visitor sends is data,
    never a description of where the server should read. :class:`ConfigError` when what is kept does
    not hold (the same checks as a task file's, without its files)."""
    kept = {k: doc[k] for k in DATA_FREE_KEYS if k in doc}
    describe(kept, ".", "the checkpoint's task_spec", data_free=True)
    return kept, [k for k in PATH_KEYS if k in doc]
