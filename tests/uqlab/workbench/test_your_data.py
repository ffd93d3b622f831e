"""A visitor's labelled file on the dataset pages (uqlab.workbench.your_data): unusual column
names, label values mapped to the checkpoint's labels, the limits, and every bad file with its
message."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from ui.logic.exports import csv_text
from uqcore.exceptions import InputError
from uqlab.catalog.labelled import read_labelled
from uqlab.workbench.your_data import (
    MAX_ROWS,
    default_mapping,
    guess_columns,
    label_values,
    read_upload,
    rows,
)

NAMES = ("unacceptable", "acceptable")


def _csv(frame: pd.DataFrame, sep: str = ",") -> bytes:
    return frame.to_csv(index=False, sep=sep).encode("utf-8")


FRAME = pd.DataFrame(
    {
        "Sentence (raw)": [
            "The cat slept.",
            "Cat the slept.",
            '=HYPERLINK("http://x","hi")',
            "She reads books.",
            "Reads she books the.",
        ],
        "Is it OK?": ["yes", "no", "no", "yes", "maybe"],
        "id#": [1, 2, 3, 4, 5],
    }
)


def test_unusual_columns_are_guessed_and_values_mapped():
    f = read_upload("my data.csv", _csv(FRAME))
    assert len(f) == 5 and f.columns == ["Sentence (raw)", "Is it OK?", "id#"]
    assert guess_columns(f) == ("Sentence (raw)", "Is it OK?")
    values = label_values(f, "Is it OK?")
    assert values == ["yes", "no", "maybe"]
    mapping = default_mapping(values, NAMES) | {"yes": 1, "no": 0}  # the visitor's choice
    assert mapping["maybe"] is None
    got = rows(f, "Sentence (raw)", "Is it OK?", mapping, "in-domain")
    assert [(t, y, i) for t, y, _, i in got] == [
        ("The cat slept.", 1, 0),
        ("Cat the slept.", 0, 1),
        ('=HYPERLINK("http://x","hi")', 0, 2),
        ("She reads books.", 1, 3),
    ]  # "maybe" is left out


def test_default_mapping_reads_names_their_starts_and_ids():
    assert default_mapping(["NEGATIVE", "pos", "1", "other"], ("neg", "pos")) == {
        "NEGATIVE": 0,
        "pos": 1,
        "1": 1,
        "other": None,
    }


@pytest.mark.parametrize("kind", ["csv", "tsv", "jsonl", "parquet"])
def test_every_kind_of_file_reads_the_same_table(kind):
    if kind in ("csv", "tsv"):
        data = _csv(FRAME, "\t" if kind == "tsv" else ",")
    elif kind == "jsonl":
        data = "\n".join(json.dumps(r) for r in FRAME.to_dict("records")).encode()
    else:
        buf = io.BytesIO()
        FRAME.to_parquet(buf)
        data = buf.getvalue()
    f = read_upload(f"x.{kind}", data)
    assert f.table.column("Sentence (raw)").to_pylist() == list(FRAME["Sentence (raw)"])


def test_a_formula_cell_is_read_as_text_and_exported_quoted():
    f = read_upload("x.csv", _csv(FRAME))
    got = rows(f, "Sentence (raw)", "Is it OK?", {"yes": 1, "no": 0}, "in-domain")
    out = csv_text(pd.DataFrame({"text": [r[0] for r in got]}), {"file": "x.csv"})
    assert "'=HYPERLINK" in out and "\n=HYPERLINK" not in out


@pytest.mark.parametrize(
    "case, message",
    [
        ("type", "use a .csv"),
        ("bytes", "the most read here is 20 MB"),
        ("rows", f"at most {MAX_ROWS:,} here"),
        ("utf8", "not UTF-8"),
        ("columns", "more than 1000 columns"),
        ("empty", "empty"),
        ("distinct", "distinct values"),
        ("same", "different columns"),
        ("unmapped", "no row has a label mapped"),
        ("blank", "row 2: the text"),
    ],
)
def test_bad_files_get_one_clear_message(case, message):
    def call():
        if case == "type":
            return read_upload("x.xlsx", b"PK")
        if case == "bytes":
            return read_upload("x.csv", b"a,b\n" + b"x" * (21 * 2**20))
        if case == "rows":
            return read_upload(
                "x.csv",
                _csv(pd.DataFrame({"t": ["a"] * (MAX_ROWS + 1), "y": [0] * (MAX_ROWS + 1)})),
            )
        if case == "utf8":
            return read_upload("x.csv", "t,y\ncafé,0\n".encode("latin-1"))
        if case == "columns":
            return read_upload("x.csv", (",".join(f"c{i}" for i in range(10**6)) + "\n").encode())
        if case == "empty":
            return read_upload("x.csv", b"")
        f = read_upload(
            "x.csv",
            _csv(
                pd.DataFrame(
                    {
                        "t": ["a", " ", "c"] * 20,
                        "u": [str(i) for i in range(60)],
                        "y": [0, 1, 0] * 20,
                    }
                )
            ),
        )
        if case == "distinct":
            return label_values(f, "u")
        if case == "same":
            return rows(f, "t", "t", {}, "in-domain")
        if case == "unmapped":
            return rows(f, "t", "y", {"0": None, "1": None}, "in-domain")
        return rows(f, "t", "y", {"0": 0, "1": 1}, "in-domain")

    with pytest.raises(InputError, match=message):
        call()


DEEP = b"[" * 200_000  # under every 1 MB limit; json.loads raises RecursionError on it


def _one_line(exc: BaseException, *words: str) -> str:
    text = str(exc)
    assert "\n" not in text and "/" not in text.replace("[ ] or { }", ""), text  # no server path
    for word in words:
        assert word in text, text
    return text


def test_a_deep_jsonl_labelled_file_gets_a_message(tmp_path):
    data = b'{"text": "a fine film", "label": 1}\n' + DEEP + b"\n"
    with pytest.raises(InputError) as info:
        read_upload("mine.jsonl", data)
    _one_line(info.value, "line 2 of mine.jsonl", "nested too deeply")
    (tmp_path / "d.jsonl").write_bytes(data)
    with pytest.raises(InputError) as info:
        read_labelled(tmp_path / "d.jsonl", "text", "label", ("neg", "pos"))
    _one_line(info.value, "line 2 of d.jsonl", "nested too deeply")


def test_an_uploaded_jsonl_of_many_tiny_rows_is_refused_before_parsing():
    with pytest.raises(InputError) as info:
        read_upload("mine.jsonl", b"{}\n" * 1_000_000)
    _one_line(info.value, "mine.jsonl", "at most 5,000 here")
    rows = b"".join(
        json.dumps({"text": f"film {i}", "label": i % 2}).encode() + b"\n" for i in range(50)
    )
    assert len(read_upload("mine.jsonl", rows)) == 50
