"""Tasks described by a file (:mod:`uqlab.catalog.task_file`) that the tests write: the three-class
colour task (colour words in filler text; labels as names or ids) and a tiny two-label one like
the tiny models'. Each writer returns the description's path; the task is registered only when a
test reads the file (the ``tasks_restored`` fixture puts the task table back)."""

from __future__ import annotations

import csv
import json
import random
from pathlib import Path

WORDS = {"red": 0, "green": 1, "blue": 2}
FILL = "the a big small old new shiny dull car house ball hat box".split()


def colour_rows(n: int = 150, seed: int = 0) -> list[dict[str, object]]:
    """``n`` rows ``{"Review Text", "Colour"}``: four filler words, a colour word, two more;
    the label is the colour's id on even rows and its name (in mixed case) on odd rows."""
    rng = random.Random(seed)
    out = []
    for i in range(n):
        w = rng.choice(list(WORDS))
        text = " ".join(rng.sample(FILL, 4) + [w] + rng.sample(FILL, 2))
        label = ["RED", "Green", "blue"][WORDS[w]] if i % 2 else WORDS[w]  # names or ids
        out.append({"Review Text": text, "Colour": label})
    return out


def write_csv(path: Path, rows: list[dict[str, object]], sep: str = ",") -> Path:
    """``rows`` as a CSV (or, with ``sep="\\t"``, a TSV) at ``path``, with a header."""
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, list(rows[0]), delimiter=sep)
        w.writeheader()
        w.writerows(rows)
    return path


def colour_task(folder: Path, name: str = "colours", **changes) -> Path:
    """The colour task's description ``<name>.json`` in ``folder`` over ``colours.csv`` (150
    :func:`colour_rows`, split 60/20/20), with tiny training defaults; ``changes`` replace or
    add top-level entries."""
    write_csv(folder / "colours.csv", colour_rows())
    doc = {
        "name": name,
        "title": "Colour words",
        "text_column": "Review Text",
        "label_column": "Colour",
        "label_names": ["red", "green", "blue"],
        "data": {"file": "colours.csv", "split": {"dev": 0.2, "test": 0.2}, "seed": 1},
        "train_defaults": {
            "max_len": 16,
            "batch_size": 16,
            "lr": 3e-3,
            "vocab_size": 100,
            "min_freq": 1,
            "model": {"n_layers": 1, "n_heads": 2, "d_model": 16, "d_ff": 32, "dropout": 0.1},
        },
    } | changes
    path = folder / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


def tiny_task(folder: Path, name: str = "tiny-acc", **changes) -> Path:
    """A tiny two-label task description ``<name>.json`` in ``folder`` (created): one CSV of 40
    rows split by fractions, labels ``bad`` / ``good`` like the tiny models'; ``changes``
    replace or add top-level entries."""
    folder.mkdir(parents=True, exist_ok=True)
    rows = ["text,label"] + [f"sentence number {i} here,{i % 2}" for i in range(40)]
    (folder / "rows.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    doc = {
        "name": name,
        "title": "Tiny acceptability",
        "text_column": "text",
        "label_column": "label",
        "label_names": ["bad", "good"],
        "data": {"file": "rows.csv", "split": {"dev": 0.2, "test": 0.2}, "seed": 0},
    } | changes
    path = folder / f"{name}.json"
    path.write_text(json.dumps(doc), encoding="utf-8")
    return path
