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

``data`` is either three files (``train``, ``dev``, ``test``) or one file with split fractions
and a seed: ``{"file": "all.csv", "split": {"dev": 0.1, "test": 0.2}, "seed": 0}``. ``ood`` is
optional. Files may be CSV, TSV, JSON lines, Parquet or a ``datasets`` ``save_to_disk`` folder
(:mod:`uqlab.labelled`); a path is relative to the description's folder, and ``${data}`` stands
for the data folder (``--data-dir`` or ``$UQ_DATA_DIR``). Labels are ids ``0..C-1`` or label
names. ``metric``: ``accuracy`` (default for two classes), ``mcc`` (two classes) or
``macro_f1`` (default for more). ``train_defaults``: what a training config starts from (the
model's shape, the learning rate...; default: the word-level CoLA recipe).

:func:`read_task_file` checks the description (unknown keys, missing fields, labels, metric,
paths) and returns a :class:`uqlab.tasks.TaskSpec` registered in the task table
(:func:`uqlab.tasks.register`), so every other module reads it as it reads the built-in tasks.
A checkpoint trained on it keeps the description in ``training.task_spec``
(:func:`register_from_training`), so evaluating or opening it needs no file.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import numpy as np

from uqcore.errors import ConfigError, InputError
from uqlab.labelled import Labelled, read_labelled
from uqlab.tasks import METRICS, TASKS, TaskSpec, register

KEYS = {"name", "title", "short", "text_column", "label_column", "label_names", "metric",
        "data", "ood", "train_defaults"}  # fmt: skip
REQUIRED = ("name", "label_names", "text_column", "data")
MAX_LABELS = 100
DATA = "${data}"
DEFAULT_TRAINING = {  # the word-level CoLA recipe: small, trains in minutes on 2 cores
    "max_len": 64, "batch_size": 32, "lr": 5e-4, "vocab_size": 8_000, "min_freq": 1,
    "model": {"n_layers": 2, "n_heads": 4, "d_model": 128, "d_ff": 256, "dropout": 0.1},
}  # fmt: skip


def read_task_file(path: str | os.PathLike) -> TaskSpec:
    """Read, check and register the description at ``path``; :class:`ConfigError` naming the
    file and what is wrong."""
    path = Path(path)
    try:
        if path.stat().st_size > 1 << 20:
            raise ConfigError(f"{path.name} is over 1 MB; a task description is a small JSON.")
        doc = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ConfigError(f"No task file at {path}.") from None
    except UnicodeDecodeError:
        raise ConfigError(f"{path.name} is not UTF-8 text.") from None
    except ValueError as exc:
        raise ConfigError(f"{path.name} is not valid JSON ({exc}).") from None
    return register(describe(doc, path.resolve().parent, path.name))


def describe(doc: Any, base: Path, where: str = "the task file") -> TaskSpec:
    """The :class:`TaskSpec` of a description ``doc`` whose relative paths start at ``base``."""
    if not isinstance(doc, dict):
        raise ConfigError(f"{where} must hold a JSON object.")
    unknown = sorted(set(doc) - KEYS - {"base"})
    if unknown:
        raise ConfigError(f"{where} has unknown key(s) {', '.join(unknown)}; known: "
                          f"{', '.join(sorted(KEYS))}.")  # fmt: skip
    missing = [k for k in REQUIRED if k not in doc]
    if missing:
        raise ConfigError(f"{where} lacks {', '.join(missing)}.")
    name = doc["name"]
    if not isinstance(name, str) or not re.fullmatch(r"[a-z0-9][a-z0-9-]{0,39}", name):
        raise ConfigError(f"{where}: name must be 1-40 lower-case letters, digits or dashes; "
                          f"got {name!r}.")  # fmt: skip
    known = TASKS.get(name)
    if known is not None and known.description is None:
        raise ConfigError(f"{where}: {name!r} is a built-in task's name; choose another.")
    labels = doc["label_names"]
    if (not isinstance(labels, list) or not 2 <= len(labels) <= MAX_LABELS
            or not all(isinstance(x, str) and 0 < len(x) <= 40 for x in labels)
            or len({x.lower() for x in labels}) != len(labels)):  # fmt: skip
        raise ConfigError(f"{where}: label_names must list 2-{MAX_LABELS} distinct names of "
                          "1-40 characters, in the order of the label ids.")  # fmt: skip
    metric = doc.get("metric", "accuracy" if len(labels) == 2 else "macro_f1")
    spec_m = METRICS.get(metric) if isinstance(metric, str) else None
    if spec_m is None:
        raise ConfigError(f"{where}: metric must be one of {', '.join(METRICS)}; got {metric!r}.")
    if spec_m.n_classes is not None and spec_m.n_classes != len(labels):
        raise ConfigError(f"{where}: {spec_m.title} is for {spec_m.n_classes} classes; this task "
                          f"has {len(labels)}: use macro_f1 or accuracy.")  # fmt: skip
    columns = {k: doc.get(k, "label" if k == "label_column" else None)
               for k in ("text_column", "label_column")}  # fmt: skip
    for key, col in columns.items():
        if not isinstance(col, str) or not col or len(col) > 200:
            raise ConfigError(f"{where}: {key} must name a column, got {col!r}.")
    data = _check_data(doc["data"], where)
    ood = doc.get("ood")
    if ood is not None and (not isinstance(ood, dict) or set(ood) - {"file", "name"}
                            or not isinstance(ood.get("file"), str)):  # fmt: skip
        raise ConfigError(f'{where}: ood must be {{"file": PATH, "name": TEXT}} or left out.')
    defaults = doc.get("train_defaults", DEFAULT_TRAINING)
    if not isinstance(defaults, dict):
        raise ConfigError(f"{where}: train_defaults must be a JSON object.")
    title = str(doc.get("title") or name)[:60]
    description = {**doc, "base": str(doc.get("base", base))}
    return TaskSpec(
        name, title, str(doc.get("short") or title)[:20], tuple(labels), metric,
        columns["text_column"], files=(), layout=f"the files named in {where}",
        test_in_pool="file" in data, hub=None, eval_subsets={}, eval_id_sample=False,
        ood_name=str((ood or {}).get("name") or "out-of-domain")[:40], train_defaults=defaults,
        label_column=columns["label_column"], description=description,
    )  # fmt: skip


def _check_data(data: Any, where: str) -> dict:
    if not isinstance(data, dict):
        raise ConfigError(f"{where}: data must be an object (train/dev/test files, or a file "
                          "with split fractions).")  # fmt: skip
    if "file" in data:
        if set(data) - {"file", "split", "seed"} or not isinstance(data["file"], str):
            raise ConfigError(f"{where}: data with one file takes file, split and seed only.")
        split = data.get("split", {"dev": 0.1, "test": 0.2})
        ok = (isinstance(split, dict) and set(split) == {"dev", "test"}
              and all(isinstance(v, int | float) and 0 < v < 0.5 for v in split.values())
              and sum(split.values()) < 0.9)  # fmt: skip
        seed = data.get("seed", 0)
        if not ok or isinstance(seed, bool) or not isinstance(seed, int):
            raise ConfigError(
                f'{where}: split must be {{"dev": f, "test": f}} with each '
                "fraction in (0, 0.5) and their sum under 0.9; seed an integer."
            )
        return data
    if set(data) != {"train", "dev", "test"} or not all(isinstance(v, str) for v in data.values()):
        raise ConfigError(f"{where}: data must name train, dev and test files (and nothing "
                          "else), or one file with split and seed.")  # fmt: skip
    return data


def resolve(spec: TaskSpec, value: str, data_dir: Path | None) -> Path:
    """A path of the description: ``${data}`` is the data folder, relative paths start at the
    description's folder."""
    if value.startswith(DATA):
        if data_dir is None:
            raise InputError(f"Task {spec.name!r} reads {value}: give the data folder "
                             "(--data-dir or UQ_DATA_DIR).")  # fmt: skip
        return Path(data_dir) / value[len(DATA) :].lstrip("/\\")
    path = Path(value).expanduser()
    return path if path.is_absolute() else Path(spec.description["base"]) / path


def read_split(spec: TaskSpec, value: str, data_dir: Path | None) -> Labelled:
    return read_labelled(resolve(spec, value, data_dir), spec.text_column, spec.label_column,
                         spec.label_names)  # fmt: skip


def load_described(spec: TaskSpec, data_dir: Path | None, split_seed: int, limit: int | None):
    """The :class:`uqlab.data.TaskData` of a described task (late import: data calls this)."""
    from uqlab.data import Split, TaskData, _take

    doc = spec.description
    data = doc["data"]
    rng = np.random.default_rng(data.get("seed", split_seed) if "file" in data else split_seed)
    if "file" in data:
        rows = read_split(spec, data["file"], data_dir)
        n, frac = len(rows), data.get("split", {"dev": 0.1, "test": 0.2})
        p = rng.permutation(n)
        n_dev, n_test = round(frac["dev"] * n), round(frac["test"] * n)
        if min(n_dev, n_test, n - n_dev - n_test) < 1:
            raise InputError(f"{rows.where} has {n} rows: too few for a train, dev and test "
                             "split with these fractions.")  # fmt: skip
        pool = (rows.texts, rows.labels)
        parts = {"train": p[: n - n_dev - n_test], "dev": p[n - n_dev - n_test : n - n_test],
                 "test": p[n - n_test :]}  # fmt: skip
        splits = {k: _take(k, pool, v, limit) for k, v in parts.items()}
    else:
        splits = {}
        for k in ("train", "dev", "test"):
            rows = read_split(spec, data[k], data_dir)
            order = rng.permutation(len(rows)) if k == "test" else np.arange(len(rows))
            splits[k] = _take(k, (rows.texts, rows.labels), order, limit)
    ood = doc.get("ood")
    if ood:
        rows = read_split(spec, ood["file"], data_dir)
        splits["ood"] = _take("ood", (rows.texts, rows.labels), rng.permutation(len(rows)), limit)
    else:
        splits["ood"] = Split("ood", (), ())
    source = str(data_dir) if data_dir is not None else doc["base"]
    return TaskData(spec.name, spec.label_names, spec.metric, **splits, source=source)


def register_from_training(training: dict | None) -> str | None:
    """Register the task a checkpoint's training info describes (``task_spec``), if any; return
    the task's name (None when the checkpoint names none)."""
    training = training or {}
    doc = training.get("task_spec")
    if isinstance(doc, dict) and doc.get("name") not in TASKS:  # a --task-file given wins
        register(describe(doc, Path(doc.get("base", ".")), "the checkpoint's task_spec"))
    task = training.get("task")
    return task if isinstance(task, str) else None
