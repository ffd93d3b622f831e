"""Uploaded tokenizers (issue 31, item 4): a ``tokenizer.json`` outside the allow-list is
refused when a Hugging Face zip is installed (uqlab.models.intake); the supported ones still
load."""

from __future__ import annotations

import pytest

from tests.helpers import zip_folder
from tests.hf_tiny import ARCHS, tiny_folder
from uqcore.registry import load
from uqlab.models.intake import UploadError, files_from_zip, install

pytest.importorskip("transformers")


BACKTRACKS = {
    "type": "Split",
    "pattern": {"Regex": r"(\w+\s?)+$"},
    "behavior": "Isolated",
    "invert": False,
}


REPLACE = {"type": "Replace", "pattern": {"Regex": "(a+)+$"}, "content": ""}


@pytest.fixture(scope="module")
def hf_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    for arch in ARCHS:
        tiny_folder(arch, root / f"tiny-{arch}")
    return root


def _nested(depth: int) -> dict:
    part = {"type": "BertPreTokenizer"}
    for _ in range(depth):
        part = {"type": "Sequence", "pretokenizers": [part]}
    return part


def _word_level(doc: dict) -> dict:
    vocab = doc["model"]["vocab"]
    return {**doc, "model": {"type": "WordLevel", "vocab": vocab, "unk_token": "[UNK]"}}


HOSTILE = {
    "backtracking Split": (lambda d: {**d, "pre_tokenizer": BACKTRACKS}, "pre-tokenizer Split"),
    "Replace regex": (lambda d: {**d, "normalizer": REPLACE}, "normalizer Replace"),
    "other model": (_word_level, "model WordLevel"),
    "deep Sequence": (lambda d: {**d, "pre_tokenizer": _nested(12)}, "nested"),
}


@pytest.mark.parametrize("case", HOSTILE)
def test_a_hostile_tokenizer_is_refused_on_upload_with_a_message(case, hf_root, tmp_path):
    change, message = HOSTILE[case]
    files = files_from_zip(zip_folder(hf_root / "tiny-bert", {"tokenizer.json": change}))
    with pytest.raises(UploadError, match=message) as info:
        install(files, "hostile", tmp_path, task="cola")
    text = str(info.value)  # one line naming the component and what is accepted
    assert "\n" not in text and "tokenizer.json" in text and "this app reads the" in text
    assert str(tmp_path) not in text
    assert not list(tmp_path.iterdir())  # nothing left behind


@pytest.mark.parametrize("arch", ARCHS)
def test_the_supported_tokenizers_still_upload(arch, hf_root, tmp_path):
    files = files_from_zip(zip_folder(hf_root / f"tiny-{arch}"))
    name = install(files, arch, tmp_path, task="cola")
    ck = load(name, tmp_path)
    assert len(ck.vocab.encode("the cat sat on the mat .", 16).ids) > 2
