"""A Hugging Face classifier uploaded as a zip (uqlab.models.intake): a zipped folder uploads as
each training-free family, hostile zips are refused with a message naming no server path, the task
is guessed from id2label."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.helpers import zip_folder
from tests.hf_tiny import tiny_folder
from uqcore.registry import load
from uqlab.import_hf import TRAINING_FREE
from uqlab.models.intake import UploadError, files_from_zip, install

pytest.importorskip("transformers")


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


@pytest.mark.parametrize(
    "change, message",
    [
        (lambda h: {**h, "num_hidden_layers": 10**6}, "parameters"),
        (lambda h: {**h, "model_type": "t5"}, "'t5'"),
        (lambda h: {k: v for k, v in h.items() if k != "id2label"}, "no id2label"),
    ],
)
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


def test_a_hf_zip_takes_any_task_the_server_knows(hf_root, tmp_path):
    """Issue 36: the built-in tasks only; now also a task the operator's checkpoints or task
    files describe (CR here), and still never one the server does not know."""
    from uqlab.catalog.task_file import read_task_file
    from uqlab.catalog.tasks import TASKS

    before = dict(TASKS)
    try:
        read_task_file(Path(__file__).resolve().parents[3] / "configs" / "tasks" / "cr.json")
        files = files_from_zip(zip_folder(hf_root / "tiny-bert"))
        name = install(files, "tiny", tmp_path, task="cr", family="sto")
        assert load(name, tmp_path).training["task"] == "cr"
        with pytest.raises(UploadError, match="Pick the task.*cr"):
            install(files, "tiny2", tmp_path, task="sst2", family="sto")
    finally:
        TASKS.clear()
        TASKS.update(before)


def test_a_hf_zip_takes_the_visitors_own_task_description_data_free(hf_root, tmp_path):
    """Issue 36: a visitor describes the task (a task file's bytes): kept in the checkpoint
    without the files it names, never registered on the server; hostile ones refused."""
    from uqlab.catalog.tasks import TASKS

    files = files_from_zip(zip_folder(hf_root / "tiny-bert"))
    doc = {
        "name": "my-reviews",
        "title": "My reviews",
        "label_names": ["bad", "good"],
        "text_column": "review",
        "data": {"file": "/etc/passwd", "split": {"dev": 0.1, "test": 0.1}},
        "ood": {"file": "../../secrets.csv", "name": "x"},
    }
    name = install(files, "tiny", tmp_path, family="sto", task_doc=json.dumps(doc).encode())
    training = load(name, tmp_path).training
    assert training["task"] == "my-reviews" and "my-reviews" not in TASKS
    assert training["task_spec"]["label_names"] == ["bad", "good"]
    assert not {"data", "ood"} & set(training["task_spec"])  # never a server path
    bad = {
        b"[" * 100_000: "nested too deeply",
        b'"a string"': "JSON object",
        json.dumps({**doc, "name": "cola"}).encode(): "'cola' is a built-in",
        json.dumps({**doc, "label_names": ["a", "b", "c"]}).encode(): "3",
        json.dumps({"name": "x"}).encode(): "label_names",
        b"{" + b" " * (2 << 20) + b"}": "MB",
    }
    for raw, message in bad.items():
        with pytest.raises(UploadError, match=message) as err:
            install(files, "again", tmp_path / "other", family="sto", task_doc=raw)
        assert "/tmp" not in str(err.value) and "\n" not in str(err.value)
        assert not (tmp_path / "other").exists() or not any((tmp_path / "other").iterdir())


def test_the_task_is_guessed_from_id2label(hf_root):
    from uqlab.models.intake import guess_task

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


@pytest.mark.parametrize("arch", ["llama", "gpt2"])
def test_a_zipped_decoder_classifier_uploads(tmp_path, arch):
    """A LlamaForSequenceClassification / GPT2ForSequenceClassification zip (issue 35): kept
    inside the checkpoint, read with its own tokenizer's template, causal."""
    from tests.hf_tiny import tiny_decoder_folder

    folder = tiny_decoder_folder(arch, tmp_path / "hf")
    files = files_from_zip(zip_folder(folder))
    name = install(files, "tiny-dec", tmp_path / "root", task="cola", family="sto")
    ck = load(name, tmp_path / "root")
    assert ck.config.backbone == arch and ck.base.inside
    assert ck.vocab.encode("the cat sat", ck.config.max_len).ids
