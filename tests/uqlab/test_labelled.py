"""Labelled data files (uqlab.labelled): every file format reads the same rows."""

from __future__ import annotations

import csv
import json
import random

import pytest

from uqlab.labelled import read_labelled
from uqlab.tasks import TASKS

WORDS = {"red": 0, "green": 1, "blue": 2}


FILL = "the a big small old new shiny dull car house ball hat box".split()


def _rows(n=150, seed=0):
    rng = random.Random(seed)
    out = []
    for i in range(n):
        w = rng.choice(list(WORDS))
        text = " ".join(rng.sample(FILL, 4) + [w] + rng.sample(FILL, 2))
        label = ["RED", "Green", "blue"][WORDS[w]] if i % 2 else WORDS[w]  # names or ids
        out.append({"Review Text": text, "Colour": label})
    return out


def _csv(path, rows, sep=","):
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, list(rows[0]), delimiter=sep)
        w.writeheader()
        w.writerows(rows)
    return path


@pytest.fixture(autouse=True)
def _forget_described_tasks():
    before = dict(TASKS)
    yield
    TASKS.clear()
    TASKS.update(before)


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "parquet", "datasets"])
def test_every_file_format_reads_the_same_rows(tmp_path, fmt):
    rows = _rows(30)
    if fmt in ("csv", "tsv"):
        path = _csv(tmp_path / f"d.{fmt}", rows, "\t" if fmt == "tsv" else ",")
    elif fmt == "jsonl":
        path = tmp_path / "d.jsonl"
        path.write_text("\n".join(json.dumps(r) for r in rows), encoding="utf-8")
    else:
        import datasets

        ds = datasets.Dataset.from_list([{**r, "Colour": str(r["Colour"])} for r in rows])
        if fmt == "parquet":
            path = tmp_path / "d.parquet"
            ds.to_parquet(str(path))
        else:
            path = tmp_path / "d"
            ds.save_to_disk(str(path))
    got = read_labelled(path, "Review Text", "Colour", ("red", "green", "blue"))
    assert got.texts == tuple(r["Review Text"] for r in rows)
    assert got.labels == tuple(WORDS[r["Review Text"].split()[4]] for r in rows)
