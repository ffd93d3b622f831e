"""An imported model's reading length and its probe pass (uqlab.models.import_reading, issue 45
items 8 and 3): ``--max-len``, else the task file, else an export's record, else the folder's
tokenizer config, else the model's positions, each bounded by the positions and said; the length is
kept in the checkpoint and written by the export; a model that validates but cannot run (NaN on a
probe) is refused at import and at upload, leaving nothing."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import torch
from safetensors.torch import load_file, save_file

from tests.helpers import zip_folder
from tests.hf_tiny import tiny_decoder_folder
from uqcore.exceptions import CheckpointError
from uqcore.registry import load
from uqlab import import_hf
from uqlab.export_hf import export
from uqlab.models.import_reading import NO_LIMIT, reading_length
from uqlab.models.intake import UploadError, files_from_zip, install

pytest.importorskip("transformers")
POSITIONS = 64  # the tiny folders'


@pytest.fixture(scope="module")
def llama(tmp_path_factory) -> Path:
    return tiny_decoder_folder("llama", tmp_path_factory.mktemp("dec") / "llama")


def _copy(folder: Path, tmp_path: Path, **tokenizer_config) -> Path:
    out = tmp_path / "hf"
    shutil.copytree(folder, out)
    if tokenizer_config:
        (out / "tokenizer_config.json").write_text(json.dumps(tokenizer_config))
    return out


def _import(capsys, folder: Path, root: Path, *extra: str, name: str = "x") -> str:
    argv = [str(folder), "--name", name, "--task", "cola", "--root", str(root), *extra]
    assert import_hf.main(argv) == 0, capsys.readouterr().err
    return capsys.readouterr().out


def test_max_len_is_recorded_said_and_written_by_the_export(llama, tmp_path, capsys):
    root = tmp_path / "ck"
    out = _import(capsys, llama, root, "--max-len", "24")
    assert "reads 24 tokens a text (from --max-len)" in out
    ck = load("x", root)
    assert ck.read_len == 24 and ck.config.max_len == POSITIONS
    assert ck.training["config"] == {"max_len": 24, "max_len_from": "--max-len"}
    exported = export("x", tmp_path / "exported", root)
    side = json.loads((exported / "uq_family.json").read_text())
    assert side["training"]["config"]["max_len"] == 24
    again = _import(capsys, exported, root, name="again")  # the export's record, read back
    assert "reads 24 tokens a text (from the export's uq_family.json)" in again
    assert load("again", root).read_len == 24


@pytest.mark.parametrize("value", ["65", "1", "0", "-3"])
def test_a_max_len_out_of_range_is_one_line(llama, tmp_path, capsys, value):
    argv = [str(llama), "--name", "x", "--task", "cola", "--root", str(tmp_path / "ck")]
    assert import_hf.main([*argv, "--max-len", value]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: --max-len") and "\n" not in err, err


def test_the_tokenizer_config_gives_the_length_within_the_positions(llama, tmp_path, capsys):
    root = tmp_path / "ck"
    folder = _copy(llama, tmp_path, model_max_length=32)
    out = _import(capsys, folder, root)
    assert "reads 32 tokens a text (from tokenizer_config.json model_max_length)" in out
    assert load("x", root).read_len == 32
    (folder / "tokenizer_config.json").write_text(json.dumps({"model_max_length": 1000}))
    out = _import(capsys, folder, root, name="capped")
    assert "capped at the model's 64 positions" in out and load("capped", root).read_len == 64


def test_no_limit_or_no_file_reads_at_the_positions(llama, tmp_path):
    assert reading_length(llama, POSITIONS).tokens == POSITIONS
    folder = _copy(llama, tmp_path, model_max_length=int(1e30))  # transformers' "no limit"
    got = reading_length(folder, POSITIONS)
    assert got.tokens == POSITIONS and got.source.startswith("the model's positions")
    assert NO_LIMIT < int(1e30)


@pytest.mark.parametrize("value", ["abc", [32], True, 1, 32.5, -1])
def test_a_wrong_model_max_length_is_one_line(llama, tmp_path, value):
    folder = _copy(llama, tmp_path, model_max_length=value)
    with pytest.raises(CheckpointError, match="model_max_length") as err:
        reading_length(folder, POSITIONS)
    assert "\n" not in str(err.value)


def test_the_sources_in_their_order(llama, tmp_path):
    folder = _copy(llama, tmp_path, model_max_length=32)
    task = {"train_defaults": {"max_len": 40}}
    side = {"training": {"config": {"max_len": 48}}}
    assert reading_length(folder, 64, max_len=20, task=task, side=side).tokens == 20
    assert reading_length(folder, 64, task=task, side=side).source.startswith("the task file")
    assert reading_length(folder, 64, task=task, side=side).tokens == 40
    assert reading_length(folder, 64, side=side).tokens == 48
    assert reading_length(folder, 64, task={"train_defaults": {}}).tokens == 32
    with pytest.raises(CheckpointError, match="train_defaults's max_len"):
        reading_length(folder, 64, task={"train_defaults": {"max_len": "long"}})
    with pytest.raises(CheckpointError, match="uq_family.json's training's config"):
        reading_length(folder, 64, side={"training": {"config": [48]}})


def test_a_task_file_gives_the_length(llama, tmp_path, capsys):
    rows = ["text,label"] + [f"sentence number {i} here,{i % 2}" for i in range(40)]
    (tmp_path / "rows.csv").write_text("\n".join(rows) + "\n", encoding="utf-8")
    task = tmp_path / "tiny-len.json"
    doc = {
        "name": "tiny-len",
        "text_column": "text",
        "label_names": ["bad", "good"],
        "data": {"file": "rows.csv", "split": {"dev": 0.2, "test": 0.2}, "seed": 0},
        "train_defaults": {"max_len": 40},
    }
    task.write_text(json.dumps(doc), encoding="utf-8")
    root = tmp_path / "ck"
    argv = [str(llama), "--name", "t", "--task-file", str(task), "--root", str(root)]
    try:
        assert import_hf.main(argv) == 0, capsys.readouterr().err
    finally:
        from uqlab.catalog.tasks import TASKS

        TASKS.pop("tiny-len", None)
    assert "from the task file's train_defaults.max_len" in capsys.readouterr().out
    assert load("t", root).read_len == 40


def _overflowing(folder: Path, tmp_path: Path) -> Path:
    """The folder with a head of finite weights so large that every logit overflows: its
    config and weights validate, and every text gives NaN probabilities."""
    out = _copy(folder, tmp_path)
    tensors = load_file(str(out / "model.safetensors"))
    tensors["score.weight"] = torch.sign(tensors["score.weight"]) * 3e38
    save_file(tensors, str(out / "model.safetensors"), metadata={"format": "pt"})
    return out


def test_a_model_that_cannot_run_is_refused_at_import_and_upload(llama, tmp_path, capsys):
    folder = _overflowing(llama, tmp_path)
    root = tmp_path / "ck"
    argv = [str(folder), "--name", "x", "--task", "cola", "--root", str(root)]
    assert import_hf.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert "NaN or infinite probabilities on a probe text" in err and "\n" not in err, err
    assert not root.exists() or not any(root.iterdir())
    up = tmp_path / "up"
    up.mkdir()
    with pytest.raises(UploadError, match="probe text") as exc:
        install(files_from_zip(zip_folder(folder)), "x", up, task="cola", family="sto")
    assert "\n" not in str(exc.value) and not any(up.iterdir())


def test_an_upload_on_a_server_base_that_cannot_run_is_refused(tmp_path):
    """A label-word checkpoint is 5 kB on the server's SmolLM2 base; its config.json, the
    visitor's, sets the RoPE base. 1e-300 validates (a positive number) and gives NaN on every
    text: the probe refuses it at upload, and nothing is left."""
    from uqcore.exceptions import UQError
    from uqlab.bases import get_base
    from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR

    try:
        get_base("smollm2").path()
    except UQError as exc:  # not installed: python -m uqlab.bases install smollm2
        pytest.skip(str(exc))

    def tiny_theta(doc: dict) -> dict:
        params = {**doc["model"]["backbone_params"], "rope_theta": 1e-300}
        return {**doc, "model": {**doc["model"], "backbone_params": params}}

    zipped = zip_folder(
        SHIPPED_CHECKPOINT_DIR / "cr-smollm2-words-sto", {"config.json": tiny_theta}
    )
    with pytest.raises(UploadError, match="NaN or infinite probabilities on a probe text"):
        install(files_from_zip(zipped), "w", tmp_path)
    assert not any(tmp_path.iterdir())
