"""Uploads (uqlab.models.intake) read untrusted JSON through uqcore.untrusted: a deep or oversized
file gets one line naming it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.app_fixtures import make_checkpoints
from tests.helpers import zip_files
from uqcore.untrusted import MAX_ITEMS
from uqlab.models.intake import UploadError, files_from_zip, install

DEEP = b"[" * 200_000  # under every 1 MB limit; json.loads raises RecursionError on it


def _one_line(exc: BaseException, *words: str) -> str:
    text = str(exc)
    assert "\n" not in text and "/" not in text.replace("[ ] or { }", ""), text  # no server path
    for word in words:
        assert word in text, text
    return text


@pytest.fixture(scope="module")
def ckpt_root(tmp_path_factory) -> Path:
    return make_checkpoints(tmp_path_factory.mktemp("ck"), families=("trans",))


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
