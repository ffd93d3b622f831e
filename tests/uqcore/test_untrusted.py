"""One reader for untrusted JSON (uqcore.untrusted), on every path that parses a file a visitor
or a command-line user gives: nesting ``[`` x 200,000 (under every size limit), too many values,
a non-UTF-8 or oversized file each get one line that names the file, never a RecursionError or a
traceback; normal files still read. Here the reader and the library's own readers; the other
paths: tests/uqlab/models/test_intake_untrusted.py (uploads),
tests/uqlab/workbench/test_your_data.py (a
visitor's labelled file), tests/uqlab/catalog/test_task_file.py, test_import_hf.py and
test_predict.py (command lines)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.app_fixtures import make_checkpoints
from uqcore.checkpoint import load_checkpoint
from uqcore.exceptions import CheckpointError, ConfigError, InputError, UQError
from uqcore.registry import list_checkpoints
from uqcore.text.wordpiece import WordPiece
from uqcore.untrusted import MAX_DEPTH, MAX_ITEMS, iter_jsonl, load_json
from uqlab.models.intake import UploadError

ROOT = Path(__file__).resolve().parents[2]
DEEP = b"[" * 200_000  # under every 1 MB limit; json.loads raises RecursionError on it
HF_FILES = ("config.json", "model.safetensors", "tokenizer.json")


def _one_line(exc: BaseException, *words: str) -> str:
    text = str(exc)
    assert "\n" not in text and "/" not in text.replace("[ ] or { }", ""), text  # no server path
    for word in words:
        assert word in text, text
    return text


@pytest.fixture(scope="module")
def ckpt_root(tmp_path_factory) -> Path:
    return make_checkpoints(tmp_path_factory.mktemp("ck"), families=("trans",))


# The reader itself.


def test_deep_input_is_refused_before_the_parser():
    with pytest.raises(InputError) as info:
        load_json(DEEP, what="config.json", max_bytes=2**20)
    _one_line(info.value, "config.json", "nested too deeply")
    ok = b"[" * MAX_DEPTH + b"]" * MAX_DEPTH
    assert load_json(ok, what="x", max_bytes=2**20) is not None
    with pytest.raises(InputError, match="nested too deeply"):
        load_json(b"[" + ok + b"]", what="x", max_bytes=2**20)
    with pytest.raises(InputError, match="nested too deeply"):  # "{" counts too, unclosed too
        load_json(b'{"a":' * 100, what="x", max_bytes=2**20)


def test_brackets_inside_strings_and_escapes_do_not_count():
    doc = {"a": "[" * 500 + '\\"[{', "b": ['"]]]', "\\", "x\ny"], "c": "\u2028"}
    assert load_json(json.dumps(doc).encode(), what="x", max_bytes=2**20) == doc
    hidden = b'["\\"' + b"[" * 100 + b'"]'  # the escaped quote does not end the string
    assert load_json(hidden, what="x", max_bytes=2**20) == ['"' + "[" * 100]


@pytest.mark.parametrize("error", [InputError, ConfigError, CheckpointError, UploadError])
def test_the_error_is_the_callers_class_and_a_value_error(error):
    with pytest.raises(error) as info:
        load_json(DEEP, what="f.json", max_bytes=2**20, error=error)
    assert isinstance(info.value, UQError) and isinstance(info.value, ValueError)


def test_a_million_keys_are_refused_by_the_width_bound():
    wide = json.dumps({str(i): 0 for i in range(10**6)})
    with pytest.raises(InputError) as info:
        load_json(wide, what="big.json", max_bytes=64 * 2**20)
    _one_line(info.value, "big.json", f"more than {MAX_ITEMS:,} values")
    with pytest.raises(InputError, match="values"):
        load_json(b"[" + b"0," * 300_000 + b"0]", what="x", max_bytes=2**20)


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b'{"a": "caf\xe9"}', ("f.json is not UTF-8 text",)),
        (b"x" * (2**20 + 1), ("f.json is over 1 MB",)),
        (b"{oops", ("f.json is not valid JSON (line 1, column 2",)),
        (b"[NaN]", ("NaN",)),
        (b'{"a": -Infinity}', ("-Infinity",)),
        (b"1" * 5000, ("not valid JSON",)),
    ],
)
def test_each_problem_has_its_one_line_message(data, words):
    with pytest.raises(InputError) as info:
        load_json(data, what="f.json", max_bytes=2**20)
    _one_line(info.value, *words)


def test_normal_files_still_read():
    doc = {"model_type": "bert", "id2label": {"0": "neg", "1": "pos"}, "x": [[1.5, None, True]]}
    raw = json.dumps(doc, indent=2).encode()
    assert load_json(raw, what="c", max_bytes=2**20) == doc
    assert load_json(b"\xef\xbb\xbf" + raw, what="c", max_bytes=2**20) == doc  # a BOM
    assert math.isnan(load_json(b"[NaN]", what="c", max_bytes=9, allow_nan=True)[0])
    lines = b'{"t": "a [", "y": 0}\r\n\n{"t": "b", "y": "pos"}\n'
    assert list(iter_jsonl(lines, what="d", max_bytes=100)) == [
        (1, {"t": "a [", "y": 0}),
        (3, {"t": "b", "y": "pos"}),
    ]
    for path in (ROOT / "assets" / "checkpoints").glob("cola-*/*.json"):  # shipped: all read
        load_json(
            path.read_bytes(),
            what=path.name,
            max_bytes=32 * 2**20,
            allow_nan=True,
            max_items=2_000_000,
        )


def test_json_lines_bound_each_line_and_the_file():
    with pytest.raises(InputError) as info:
        list(
            iter_jsonl(
                b'{"a": 1}\n"open\n' + DEEP, what="d.jsonl", max_bytes=2**20, max_items=10**6
            )
        )
    _one_line(info.value, "line 3 of d.jsonl", "nested too deeply")
    with pytest.raises(InputError, match="more than 10 lines"):
        list(iter_jsonl(b"{}\n" * 11, what="d.jsonl", max_bytes=2**20, max_lines=10))
    with pytest.raises(InputError, match="more than 100 values"):
        list(iter_jsonl(b"[0, 0]\n" * 60, what="d.jsonl", max_bytes=2**20, max_items=100))


# The library's readers: a tokenizer.json, a checkpoint's config.


def test_a_deep_tokenizer_json_gets_the_readers_message(tmp_path):
    folder = tmp_path / "hf"
    folder.mkdir()
    (folder / "tokenizer.json").write_bytes(DEEP)
    with pytest.raises(CheckpointError) as info:
        WordPiece.from_folder(folder)
    _one_line(info.value, "tokenizer.json", "nested too deeply")


def test_a_checkpoint_folder_with_a_deep_config_is_a_message(ckpt_root, tmp_path):
    bad = tmp_path / "root" / "cola-bad"
    bad.mkdir(parents=True)
    for f in (ckpt_root / "cola-trans").iterdir():
        (bad / f.name).write_bytes(f.read_bytes())
    (bad / "config.json").write_bytes(DEEP)
    with pytest.raises(CheckpointError) as info:
        load_checkpoint(bad)
    _one_line(info.value, "config.json", "nested too deeply")
    (listed,) = list_checkpoints(tmp_path / "root")  # the listing says so, and goes on
    assert listed.name == "cola-bad" and "nested too deeply" in listed.error
