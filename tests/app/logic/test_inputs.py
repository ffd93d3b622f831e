"""User-supplied sentences (ui.logic.inputs): pasted lines and CSV uploads."""

from __future__ import annotations

import pytest

from ui.logic.inputs import MAX_ROWS, parse_csv, parse_lines

NAMES = ("unacceptable", "acceptable")


def test_pasted_lines_with_labels_names_and_domains():
    rows, problems = parse_lines("a b\t1\nc d\tacceptable\tood\n\n\tx\ne f\tmaybe", NAMES)
    assert rows == [("a b", 1, "pasted"), ("c d", 1, "ood"), ("e f", None, "pasted")]
    assert len(problems) == 2


def test_csv_uploads():
    rows, problems = parse_csv(
        b"Sentence,label,domain\nhello there,0,id\n,1,id\nbye,2,ood\n", NAMES
    )
    assert rows == [("hello there", 0, "id"), ("bye", None, "ood")] and len(problems) == 2
    with pytest.raises(ValueError, match="'sentence'"):
        parse_csv(b"words,label\nhi,1\n", NAMES)
    with pytest.raises(ValueError, match="not a readable CSV"):
        parse_csv(b"\xff\xfe\x00garbage\x00", NAMES)
    with pytest.raises(ValueError, match="limit"):
        parse_csv(b"sentence\n" + b"x\n" * 2_000_000, NAMES)
    many, notes = parse_csv(("sentence\n" + "a\n" * (MAX_ROWS + 5)).encode(), NAMES)
    assert len(many) == MAX_ROWS and "first" in notes[-1]


def test_an_upload_limit_is_stated_in_whole_megabytes():
    from ui.logic.inputs import MAX_UPLOAD_BYTES, upload_mb

    assert upload_mb(MAX_UPLOAD_BYTES) * 2**20 == MAX_UPLOAD_BYTES
    assert upload_mb(20 * 2**20) == 20
    for bad in (2**20 + 1, 2**19, 0):  # the widget would state a rounded limit
        with pytest.raises(ValueError, match="whole number of MB"):
            upload_mb(bad)
