"""AppTest of the upload page importing an operator's Hugging Face folder (UQ_HF_DIR)."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.hf_tiny import tiny_folder
from ui.logic import keys as K
from uqlab.models.intake import HF_DIR_ENV

pytest.importorskip("transformers")


APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(scope="module")
def hf_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    for arch in ("bert", "roberta"):
        tiny_folder(arch, root / f"tiny-{arch}")
    return root


def _problems(at: AppTest) -> list[str]:
    return [str(e) for e in at.exception] + [e.value for e in at.error]


def test_an_operators_hf_folder_imports_on_the_upload_page(hf_root, monkeypatch):
    monkeypatch.setenv(HF_DIR_ENV, str(hf_root))
    at = AppTest.from_file(APP, default_timeout=300)
    at.run()
    at.switch_page("app_pages/upload.py").run()
    at.selectbox(key=K.UP_HF).set_value("tiny-roberta")
    at.selectbox(key=f"{K.UP_TASK}_server").set_value("cola")
    at.radio(key=f"{K.UP_FAMILY}_server").set_value("bam").run()
    at.button(key=K.UP_HF_GO).click().run()
    assert not _problems(at), _problems(at)
    assert any("upload-tiny-roberta-bam" in s.value for s in at.success)
    row = at.dataframe[0].value.iloc[0]
    assert (row["name"], row["family"], row["task"]) == ("upload-tiny-roberta-bam", "bam", "cola")
