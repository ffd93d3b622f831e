"""AppTest of the upload page: a server folder adds a checkpoint for every page; a long server
path gets a message, not a traceback (a minor hole of issue 31, found on main 0bbfa09)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import make_checkpoints
from uqlab import upload

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def test_the_page_says_so_for_a_long_path_without_a_traceback(monkeypatch, tmp_path):
    from tests.app_fixtures import make_checkpoints

    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(make_checkpoints(tmp_path, families=("trans",))))
    monkeypatch.setenv(upload.SERVER_PATHS_ENV, "1")
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["ckpt"] = "cola-trans"
    at.run()
    at.switch_page("app_pages/upload.py").run()
    at.text_input(key="up_path").set_value("/" + "x" * 300).run()
    at.button(key="up_path_go").click().run()
    assert not at.exception, at.exception
    assert [e.value for e in at.error]


@pytest.fixture(scope="module")
def source(tmp_path_factory) -> Path:
    return make_checkpoints(tmp_path_factory.mktemp("src")) / "cola-hsto"


def test_the_upload_page_adds_a_checkpoint_for_every_page(source, monkeypatch, tmp_path):
    shipped = make_checkpoints(tmp_path / "shipped")
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(shipped))
    monkeypatch.setenv(upload.SERVER_PATHS_ENV, "1")
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["ckpt"] = "cola-trans"
    at.run()
    at.switch_page("app_pages/upload.py").run()
    at.text_input(key="up_path").set_value(str(source)).run()
    at.button(key="up_path_go").click().run()
    assert not at.exception, at.exception
    assert any("upload-cola-hsto" in s.value for s in at.success)
    assert list(at.dataframe[0].value["name"]) == ["upload-cola-hsto"]  # selected in the browser
    at.text_input(key="up_path").set_value(str(tmp_path)).run()
    at.button(key="up_path_go").click().run()
    assert any("Missing" in e.value for e in at.error)
    folder = Path(at.session_state["upload_dir"])
    assert (folder / "upload-cola-hsto" / "model.safetensors").is_file()
    del at  # the session ends: its upload folder goes with it
    gc.collect()
    assert not folder.exists()
