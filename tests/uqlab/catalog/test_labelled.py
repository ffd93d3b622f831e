"""Labelled data files (uqlab.catalog.labelled): every file format reads the same rows."""

from __future__ import annotations

import json

import pytest

from tests.task_files import WORDS, colour_rows, write_csv
from uqlab.catalog.labelled import read_labelled

pytestmark = pytest.mark.usefixtures("tasks_restored")


@pytest.mark.parametrize("fmt", ["csv", "tsv", "jsonl", "parquet", "datasets"])
def test_every_file_format_reads_the_same_rows(tmp_path, fmt):
    rows = colour_rows(30)
    if fmt in ("csv", "tsv"):
        path = write_csv(tmp_path / f"d.{fmt}", rows, "\t" if fmt == "tsv" else ",")
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
