"""One reader for untrusted JSON (uqcore.untrusted), on every path that parses a file a visitor
or a command-line user gives: nesting ``[`` x 200,000 (under every size limit), too many values,
a non-UTF-8 or oversized file each get one line that names the file, never a RecursionError or a
traceback; normal files still read."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from tests.app_fixtures import make_checkpoints
from tests.helpers import zip_files
from ui.logic.your_data import read_upload
from uqcore.checkpoint import load_checkpoint
from uqcore.errors import CheckpointError, ConfigError, InputError, UQError
from uqcore.registry import list_checkpoints
from uqcore.untrusted import MAX_DEPTH, MAX_ITEMS, iter_jsonl, load_json
from uqcore.wordpiece import WordPiece
from uqlab import evaluate, import_hf, predict, train
from uqlab.labelled import read_labelled
from uqlab.task_file import read_task_file
from uqlab.upload import UploadError, files_from_zip, install

ROOT = Path(__file__).resolve().parent.parent
DEEP = b"[" * 200_000  # under every 1 MB limit; json.loads raises RecursionError on it
HF_FILES = ("config.json", "model.safetensors", "tokenizer.json")


def _one_line(exc: BaseException, *words: str) -> str:
    text = str(exc)
    assert "\n" not in text and "/" not in text.replace("[ ] or { }", ""), text  # no server path
    for word in words:
        assert word in text, text
    return text


def _cli(capsys, main, argv: list[str], *words: str) -> str:
    """``main(argv)`` exits 2 with one line ``error: ...`` naming ``words``, no traceback."""
    assert main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    for word in words:
        assert word in err, err
    return err


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory) -> Path:
    pytest.importorskip("transformers")
    from tests.hf_tiny import tiny_folder

    return tiny_folder("bert", tmp_path_factory.mktemp("hf") / "tiny-bert")


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


@pytest.mark.parametrize(("data", "words"), [
    (b'{"a": "caf\xe9"}', ("f.json is not UTF-8 text",)),
    (b"x" * (2**20 + 1), ("f.json is over 1 MB",)),
    (b"{oops", ("f.json is not valid JSON (line 1, column 2",)),
    (b"[NaN]", ("NaN",)), (b'{"a": -Infinity}', ("-Infinity",)),
    (b"1" * 5000, ("not valid JSON",)),
])  # fmt: skip
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
        (1, {"t": "a [", "y": 0}), (3, {"t": "b", "y": "pos"})]
    for path in (ROOT / "assets" / "checkpoints").glob("cola-*/*.json"):  # shipped: all read
        load_json(path.read_bytes(), what=path.name, max_bytes=32 * 2**20, allow_nan=True,
                  max_items=2_000_000)  # fmt: skip


def test_json_lines_bound_each_line_and_the_file():
    with pytest.raises(InputError) as info:
        list(iter_jsonl(b'{"a": 1}\n"open\n' + DEEP, what="d.jsonl", max_bytes=2**20,
                        max_items=10**6))  # fmt: skip
    _one_line(info.value, "line 3 of d.jsonl", "nested too deeply")
    with pytest.raises(InputError, match="more than 10 lines"):
        list(iter_jsonl(b"{}\n" * 11, what="d.jsonl", max_bytes=2**20, max_lines=10))
    with pytest.raises(InputError, match="more than 100 values"):
        list(iter_jsonl(b"[0, 0]\n" * 60, what="d.jsonl", max_bytes=2**20, max_items=100))


# Uploads (uqlab.upload): a Hugging Face folder zipped or loose, its uq_family.json, a checkpoint.


@pytest.mark.parametrize("zipped", [True, False], ids=["zip", "loose"])
def test_an_uploaded_hf_config_nested_deeply_gets_a_message(tmp_path, zipped):
    files = {"config.json": DEEP, "model.safetensors": b"x", "tokenizer.json": b"{}"}
    if zipped:
        files = files_from_zip(zip_files(files))
    with pytest.raises(UploadError) as info:
        install(files, "x", tmp_path, task="cola")
    _one_line(info.value, "config.json", "nested too deeply")
    assert not any(tmp_path.iterdir())


def test_a_non_utf8_hf_config_is_said_so_not_missing_vocab(tmp_path):
    config = b'{"model_type": "bert", "note": "caf\xe9"}'  # Latin-1, as an editor may save
    files = {"config.json": config, "model.safetensors": b"x", "tokenizer.json": b"{}"}
    for given in (files, files_from_zip(zip_files(files))):
        with pytest.raises(UploadError) as info:
            install(given, "x", tmp_path, task="cola")
        assert "vocab.json" not in _one_line(info.value, "config.json is not UTF-8 text")


def test_an_uploaded_config_with_too_many_values_is_refused(tmp_path):
    config = json.dumps({"model_type": "bert", "x": [0] * 300_000}).encode()
    files = {"config.json": config, "model.safetensors": b"x", "tokenizer.json": b"{}"}
    with pytest.raises(UploadError) as info:
        install(files, "x", tmp_path, task="cola")
    _one_line(info.value, "config.json", f"more than {MAX_ITEMS:,} values")


def test_an_uploaded_uq_family_json_nested_deeply_gets_a_message(hf_folder, tmp_path):
    files = {f.name: f.read_bytes() for f in hf_folder.iterdir() if f.is_file()}
    files["uq_family.json"] = DEEP
    for given in (files, files_from_zip(zip_files(files))):
        with pytest.raises(UploadError) as info:
            install(given, "x", tmp_path, task="cola", family="trans")
        _one_line(info.value, "uq_family.json", "nested too deeply")
    del files["uq_family.json"]
    assert install(files, "fine", tmp_path, task="cola", family="trans") == "upload-fine"


def test_an_uploaded_vocab_json_nested_deeply_gets_a_message(ckpt_root, tmp_path):
    folder = ckpt_root / "cola-trans"
    files = {f.name: f.read_bytes() for f in folder.iterdir() if f.is_file()}
    files["vocab.json"] = DEEP
    with pytest.raises(UploadError) as info:
        install(files_from_zip(zip_files(files)), "x", tmp_path)
    _one_line(info.value, "vocab.json", "nested too deeply")


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


# A visitor's labelled file (ui.logic.your_data) and a data file of a task (uqlab.labelled).


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
    rows = b"".join(json.dumps({"text": f"film {i}", "label": i % 2}).encode() + b"\n"
                    for i in range(50))  # fmt: skip
    assert len(read_upload("mine.jsonl", rows)) == 50


# Command lines: one line "error: ...", exit 2.


def test_a_task_file_over_1_mb_says_so(tmp_path):
    path = tmp_path / "big.json"
    path.write_bytes(b'{"name": "big", "notes": "' + b"x" * 2**20 + b'"}')
    with pytest.raises(ConfigError) as info:
        read_task_file(path)
    text = _one_line(info.value, "big.json is over 1 MB")
    assert "not valid JSON" not in text


def test_import_hf_cli_deep_config_and_side_file(capsys, hf_folder, tmp_path):
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "config.json").write_bytes(DEEP)
    (bad / "model.safetensors").write_bytes(b"x")
    argv = ["--name", "x", "--task", "cola", "--root", str(tmp_path / "out")]
    _cli(capsys, import_hf.main, [str(bad), *argv], "config.json", "nested too deeply")
    side = tmp_path / "side"
    side.mkdir()
    for f in hf_folder.iterdir():
        (side / f.name).write_bytes(f.read_bytes())
    (side / "uq_family.json").write_bytes(DEEP)
    _cli(capsys, import_hf.main, [str(side), *argv], "uq_family.json", "nested too deeply")


def test_predict_evaluate_and_train_clis_with_hostile_files(capsys, ckpt_root, tmp_path):
    task = tmp_path / "task.json"
    task.write_bytes(DEEP)
    data = tmp_path / "texts.jsonl"
    data.write_bytes(b'{"text": "fine"}\n' + DEEP)
    common = ["--ckpt", "cola-trans", "--root", str(ckpt_root), "--quiet"]
    out = ["--out", str(tmp_path / "out")]
    _cli(capsys, predict.main, [*common, *out, "--task-file", str(task)], "task.json", "deeply")
    _cli(capsys, predict.main, [*common, *out, "--file", str(data)], "texts.jsonl", "deeply")
    _cli(capsys, evaluate.main, [*common, "--task-file", str(task)], "task.json", "deeply")
    _cli(capsys, train.main, ["--task-file", str(task), "--family", "trans"], "task.json")
    config = tmp_path / "run.json"
    config.write_bytes(DEEP)
    _cli(capsys, train.main, ["--config", str(config)], "run.json", "nested too deeply")
    config.write_bytes(b"\xff\xfe{}")
    _cli(capsys, train.main, ["--config", str(config)], "run.json is not UTF-8 text")
