"""A Hugging Face classifier in the app: a zipped folder uploads as each training-free family,
hostile zips are refused with a message naming no server path, and the operator's folders
(UQ_HF_DIR) import on the "Your checkpoint" page and then open on every page."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import zip_folder
from tests.hf_tiny import tiny_folder
from ui.logic import keys as K
from ui.routes import PAGES
from uqcore.registry import load
from uqlab.import_hf import TRAINING_FREE
from uqlab.upload import HF_DIR_ENV, UploadError, files_from_zip, install

pytest.importorskip("transformers")
APP = str(Path(__file__).resolve().parent.parent / "app.py")


@pytest.fixture(scope="module")
def hf_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    for arch in ("bert", "roberta"):
        tiny_folder(arch, root / f"tiny-{arch}")
    return root


@pytest.mark.parametrize("family", TRAINING_FREE)
def test_a_zipped_hf_folder_uploads_as_each_family(hf_root, tmp_path, family):
    files = files_from_zip(zip_folder(hf_root / "tiny-bert"))
    name = install(files, "tiny", tmp_path, task="cola", family=family)
    ck = load(name, tmp_path)
    assert ck.config.family == family and ck.base.inside
    assert (tmp_path / name / "base" / "tokenizer.json").is_file()
    assert ck.training["label_names"] == ["unacceptable", "acceptable"]


@pytest.mark.parametrize("change, message", [
    (lambda h: {**h, "num_hidden_layers": 10**6}, "parameters"),
    (lambda h: {**h, "model_type": "gpt2"}, "'gpt2'"),
    (lambda h: {k: v for k, v in h.items() if k != "id2label"}, "no id2label"),
])  # fmt: skip
def test_a_hostile_hf_zip_is_refused_with_no_server_path(hf_root, tmp_path, change, message):
    files = files_from_zip(zip_folder(hf_root / "tiny-bert", {"config.json": change}))
    with pytest.raises(UploadError, match=message) as err:
        install(files, "tiny", tmp_path, task="cola", family="sto")
    assert str(tmp_path) not in str(err.value) and "/tmp" not in str(err.value)
    assert not any(tmp_path.iterdir())  # nothing left behind


def test_a_hf_zip_needs_its_tokenizer_and_a_task(hf_root, tmp_path):
    files = files_from_zip(zip_folder(hf_root / "tiny-bert"))
    with pytest.raises(UploadError, match="Pick the task"):
        install(files, "tiny", tmp_path)
    del files["tokenizer.json"]
    with pytest.raises(UploadError, match="tokenizer.json"):
        install(files, "tiny", tmp_path, task="cola")


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


@pytest.mark.parametrize("arch, family", [("roberta", "bam"), ("bert", "sto")])
def test_an_imported_model_opens_on_every_page(hf_root, tmp_path, monkeypatch, arch, family):
    from tests.app_fixtures import make_checkpoints
    from uqlab.import_hf import import_folder

    root = make_checkpoints(tmp_path / "ck", families=("trans",))
    import_folder(hf_root / f"tiny-{arch}", "mine", "cola", family=family, root=root)
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"ckpt": "mine", "T": "10", "text": "the cat sat on the mat ."})
    at.run()
    assert not _problems(at), _problems(at)
    assert at.metric, "the explorer shows no statistics for the imported model"
    if family == "bam":
        assert any("no learned prior" in c.value for c in at.caption), "say there is no prior"
    for script, title, _, _ in PAGES[1:]:
        at.switch_page(script).run()
        assert not _problems(at), f"{title}: {_problems(at)}"


def test_the_task_is_guessed_from_id2label(hf_root):
    from uqlab.upload import guess_task

    config = (hf_root / "tiny-bert" / "config.json").read_bytes()
    assert guess_task(config) == "cola"  # unacceptable, acceptable
    doc = json.loads(config)
    assert (
        guess_task(json.dumps({**doc, "id2label": {"0": "NEGATIVE", "1": "positive"}}).encode())
        == "imdb"
    )
    assert (
        guess_task(json.dumps({**doc, "id2label": {"0": "LABEL_0", "1": "LABEL_1"}}).encode())
        is None
    )
    assert guess_task(b"not json") is None


def test_an_imported_model_is_named_for_what_it_is(hf_root, tmp_path):
    from ui.logic.catalog import base_line, display_name
    from ui.logic.intro import what_you_see
    from uqcore.registry import list_checkpoints
    from uqlab.import_hf import import_folder

    import_folder(hf_root / "tiny-roberta", "mine", "cola", family="sto", root=tmp_path)
    (info,) = list_checkpoints(tmp_path)
    assert display_name(info) == "CoLA · Roberta · STO-TRANS"
    assert "RobertaForSequenceClassification brought as it is" in what_you_see(info)
    assert "referenced by the sha256" in base_line(info) and "layer(s) 1" in base_line(info)
