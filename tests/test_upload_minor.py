"""The minor holes of issue 31, each found on main 0bbfa09: a long server path gave an OSError
traceback; "Loose files" refused a checkpoint folder holding the files uqlab.evaluate writes
(map.safetensors, samples.safetensors) that the zip tab accepted; a loose file named ``../x``
was answered in the zip's words."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import zip_files
from uqlab import upload
from uqlab.upload import UploadError, files_from_zip, from_path, install

ROOT = Path(__file__).resolve().parent.parent
APP = str(ROOT / "app.py")
SHIPPED = ROOT / "assets" / "checkpoints" / "cola-hsto"


@pytest.fixture()
def with_derived(tmp_path) -> Path:
    """A copy of a shipped word-level checkpoint with its stored samples and map."""
    out = tmp_path / "cola-hsto"
    shutil.copytree(SHIPPED, out, ignore=shutil.ignore_patterns(".train"))
    assert (out / "samples.safetensors").is_file() and (out / "map.safetensors").is_file()
    return out


def test_a_very_long_server_path_gets_a_message(monkeypatch):
    monkeypatch.setenv(upload.SERVER_PATHS_ENV, "1")
    with pytest.raises(UploadError, match="cannot be read on this server|not a folder"):
        from_path("/" + "a" * 300 + "/" + "b" * 300)


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


def test_loose_files_with_the_derived_files_are_accepted_as_the_zip_is(with_derived, tmp_path):
    loose = {f.name: f.read_bytes() for f in with_derived.iterdir() if f.is_file()}
    assert "map.safetensors" in loose
    name = install(loose, "mine", tmp_path / "a")
    assert not (tmp_path / "a" / name / "map.safetensors").exists()  # computed here, not read
    assert install(files_from_zip(zip_files(loose, "cola-hsto/")), "mine", tmp_path / "b") == name


def test_a_loose_file_climbing_out_is_answered_in_its_own_words(with_derived, tmp_path):
    loose = {f.name: f.read_bytes() for f in with_derived.iterdir() if f.is_file()}
    with pytest.raises(UploadError, match="The file name '../x' points outside") as got:
        install({**loose, "../x": b"{}"}, "mine", tmp_path)
    assert "zip" not in str(got.value).lower()
