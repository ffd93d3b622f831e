"""What the lab's tests share: one tiny trained CoLA H-STO checkpoint per test module that asks
for it (module scope, as each file had its own); ``tests.helpers.evaluate_tiny`` evaluates it;
a tiny Hugging Face BERT folder per module that asks for it."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.helpers import TINY
from uqlab.train import main as train_main


@pytest.fixture(scope="module")
def checkpoint(tmp_path_factory, data_dir):
    out = tmp_path_factory.mktemp("ck") / "cola-hsto"
    mp = pytest.MonkeyPatch()
    mp.setenv("UQ_DATA_DIR", str(data_dir))
    assert train_main(["--task", "cola", "--family", "hsto", "--out", str(out), *TINY]) == 0
    mp.undo()
    return out


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory) -> Path:
    """A tiny BERT classifier as a Hugging Face folder (skipped without transformers)."""
    pytest.importorskip("transformers")
    from tests.hf_tiny import tiny_folder

    return tiny_folder("bert", tmp_path_factory.mktemp("hf") / "tiny-bert")
