"""AppTest of the upload page: a server folder adds a checkpoint for every page; a long server
path gets a message, not a traceback (a minor hole of issue 31, found on main 0bbfa09)."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import make_checkpoints
from uqlab.models import intake

ROOT = Path(__file__).resolve().parents[2]
APP = str(ROOT / "app.py")


def test_the_page_says_so_for_a_long_path_without_a_traceback(monkeypatch, tmp_path):
    from tests.app_fixtures import make_checkpoints

    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(make_checkpoints(tmp_path, families=("trans",))))
    monkeypatch.setenv(intake.SERVER_PATHS_ENV, "1")
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
    monkeypatch.setenv(intake.SERVER_PATHS_ENV, "1")
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


def _server_limit_mb() -> int:
    """``server.maxUploadSize`` of the app's .streamlit/config.toml: what the server accepts."""
    import tomllib

    with open(ROOT / ".streamlit" / "config.toml", "rb") as fh:
        return tomllib.load(fh)["server"]["maxUploadSize"]


def test_every_upload_limit_is_within_the_servers():
    """Issue 34: a widget's own limit above the server's would be refused by the server with no
    message; each limit of the app fits under ``server.maxUploadSize``."""
    from ui.logic import inputs
    from uqlab.workbench import your_data

    for limit in (intake.MAX_UPLOAD_BYTES, your_data.MAX_BYTES, inputs.MAX_UPLOAD_BYTES):
        assert limit <= _server_limit_mb() * 2**20, limit


def test_the_checkpoint_uploaders_state_the_limit_they_enforce(monkeypatch, tmp_path):
    """Issue 34: the zip uploader's label and the widget's "Limit ... per file" came from two
    places; both are now ``uqlab.models.intake.MAX_UPLOAD_BYTES`` (zip, loose files together, HF
    zip)."""
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(make_checkpoints(tmp_path, families=("trans",))))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params["ckpt"] = "cola-trans"
    at.run()
    at.switch_page("app_pages/upload.py").run()
    assert not at.exception, at.exception
    uploaders = at.get("file_uploader")
    assert len(uploaders) == 2  # the zip (checkpoint or Hugging Face) and the loose files
    mb = intake.MAX_UPLOAD_BYTES // 2**20
    for up in uploaders:
        assert up.proto.max_upload_size_mb == mb, up.proto.label
        assert f"at most {mb} MB" in up.proto.label, up.proto.label
