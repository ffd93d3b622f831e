"""Wrong-typed decoder configs at the two doors (issue 45 item 2): each is one line, with rc 2
and no traceback from ``python -m uqlab.import_hf``, and one line naming no server path from an
upload (nothing left behind); a yarn RoPE beside a default one and a RoPE base of 1e-300 are
refused at both; a Llama of 131,072 positions (Llama 3.2's) imports and uploads."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.helpers import zip_folder
from tests.hf_tiny import tiny_decoder_folder
from uqcore.registry import load
from uqlab import import_hf
from uqlab.models.intake import UploadError, files_from_zip, install

pytest.importorskip("transformers")

YARN = {"rope_type": "yarn", "factor": 4.0, "original_max_position_embeddings": 64}
# (architecture, a change of config.json, a word the one line holds)
CASES = {
    "gpt2-n_head-0": ("gpt2", {"n_head": 0}, "n_head"),
    "gpt2-n_head-str": ("gpt2", {"n_head": "4"}, "n_head"),
    "gpt2-resid_pdrop": ("gpt2", {"resid_pdrop": "x"}, "resid_pdrop"),
    "gpt2-model_type-list": ("gpt2", {"model_type": ["gpt2"]}, "model"),
    "gpt2-model_type-dict": ("gpt2", {"model_type": {"a": 1}}, "model"),
    "llama-rope_theta-abc": ("llama", {"rope_theta": "abc"}, "rope_theta"),
    "llama-rope_theta-list": ("llama", {"rope_theta": [1]}, "rope_theta"),
    "llama-rope_theta-tiny": ("llama", {"rope_theta": 1e-300}, "rope_theta"),
    "llama-rope_parameters-tiny": (
        "llama",
        {"rope_parameters": {"rope_type": "default", "rope_theta": 1e-300}},
        "rope_theta",
    ),
    "llama-yarn-beside-default": ("llama", {"rope_scaling": YARN}, "yarn"),
    "llama-heads-0": ("llama", {"num_attention_heads": 0}, "num_attention_heads"),
    "llama-kv-str": ("llama", {"num_key_value_heads": "2"}, "num_key_value_heads"),
    "llama-eps": ("llama", {"rms_norm_eps": [1e-6]}, "rms_norm_eps"),
    "qwen2-sliding_window": ("qwen2", {"sliding_window": "x"}, "sliding_window"),
    "qwen2-use_sliding_window": ("qwen2", {"use_sliding_window": "x"}, "use_sliding_window"),
}


@pytest.fixture(scope="module")
def folders(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("dec")
    return {arch: tiny_decoder_folder(arch, root / arch) for arch in ("llama", "qwen2", "gpt2")}


def _changed(folders, tmp_path: Path, arch: str, change: dict) -> Path:
    out = tmp_path / "hf"
    shutil.copytree(folders[arch], out)
    doc = json.loads((out / "config.json").read_text())
    (out / "config.json").write_text(json.dumps({**doc, **change}))
    return out


@pytest.mark.parametrize("case", CASES)
def test_the_cli_says_one_line_and_exits_2(case, folders, tmp_path, capsys):
    arch, change, word = CASES[case]
    folder = _changed(folders, tmp_path, arch, change)
    root = tmp_path / "ck"
    argv = [str(folder), "--name", "x", "--task", "cola", "--root", str(root)]
    assert import_hf.main(argv) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: ") and "\n" not in err and "Traceback" not in err, err
    assert word in err and "config.json" in err, err
    assert not root.exists() or not any(root.iterdir())  # nothing written


@pytest.mark.parametrize("case", CASES)
def test_an_upload_says_one_line_naming_no_server_path(case, folders, tmp_path):
    arch, change, word = CASES[case]
    zipped = zip_folder(folders[arch], {"config.json": lambda h: {**h, **change}})
    with pytest.raises(UploadError) as err:
        install(files_from_zip(zipped), "x", tmp_path, task="cola", family="sto")
    text = str(err.value)
    assert "\n" not in text and word in text and str(tmp_path) not in text, text
    assert not any(tmp_path.iterdir())  # nothing left behind


def test_a_llama_of_131072_positions_imports_and_uploads(folders, tmp_path, capsys):
    """Llama 3.2's positions: RoPE holds no table, so the 8,192-position budget does not
    refuse it; the model reads at most 8,192 tokens (said, and recorded)."""
    folder = _changed(folders, tmp_path, "llama", {"max_position_embeddings": 131_072})
    root = tmp_path / "ck"
    argv = [str(folder), "--name", "long", "--task", "cola", "--root", str(root)]
    assert import_hf.main(argv) == 0, capsys.readouterr().err
    assert "reads 8,192 tokens a text (from the model's positions" in capsys.readouterr().out
    ck = load("long", root)
    assert ck.config.max_len == ck.read_len == 8192
    zipped = zip_folder(folder)
    name = install(files_from_zip(zipped), "long", tmp_path / "up", task="cola", family="sto")
    assert load(name, tmp_path / "up").read_len == 8192
