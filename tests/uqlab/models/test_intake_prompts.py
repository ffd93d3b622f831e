"""Uploads that validate but could never run are refused at upload (issue 45, item 3): a
label-word prompt of 1,990 characters or holding 160 ``<|im_start|>`` (one encode of the template
bounds its tokens and its special tokens), a BPE tokenizer with dropout (random tokenization), a
post-processor template of 5,000 special tokens; each in one line, nothing left behind. The
label-word cases upload the shipped cr-smollm2-words-sto with another prompt (needs the SmolLM2
base: ``python -m uqlab.bases install smollm2``)."""

from __future__ import annotations

import pytest

from tests.helpers import zip_folder
from tests.hf_tiny import tiny_folder
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR
from uqlab.models.intake import UploadError, files_from_zip, install

WORDS = SHIPPED_CHECKPOINT_DIR / "cr-smollm2-words-sto"
CHAT = "<|im_start|>user\n{q}\n\n{{text}}<|im_end|>\n<|im_start|>assistant\n"


@pytest.fixture(scope="module")
def smollm2():
    from uqlab.bases import get_base

    try:
        return get_base("smollm2").path()
    except Exception as exc:  # ConfigError: not installed
        pytest.skip(str(exc))


def _with_template(template: str):
    def change(doc):
        doc["training"]["prompt"]["template"] = template
        return doc

    return change


def _refused(files, tmp_path, match: str, **kw) -> str:
    with pytest.raises(UploadError, match=match) as info:
        install(files, "never-runs", tmp_path, **kw)
    text = str(info.value)
    assert "\n" not in text and str(tmp_path) not in text
    assert not list(tmp_path.iterdir())  # nothing left behind
    return text


_ASK = "Is the sentiment of this review negative or positive? " * 40
LONG = CHAT.format(q=_ASK[: 1990 - len(CHAT.format(q=""))])  # 1,990 characters
SPECIALS = "<|im_start|>" * 160 + "{text}"


@pytest.mark.parametrize(
    "template",
    [LONG, SPECIALS],
    ids=["1990 characters", "160 im_start"],
)
def test_a_label_word_prompt_that_could_never_run_is_refused(template, smollm2, tmp_path):
    assert len(template) in (1990, 1926)  # within the 2,000 characters: refused by its tokens
    files = files_from_zip(zip_folder(WORDS, {"config.json": _with_template(template)}))
    _refused(files, tmp_path, "label-word prompt is .* tokens")


def test_the_shipped_prompt_and_a_short_one_still_upload(smollm2, tmp_path):
    short = CHAT.format(q="Negative or positive?")
    for n, change in enumerate((None, _with_template(short))):
        edit = {"config.json": change} if change else None
        name = install(files_from_zip(zip_folder(WORDS, edit)), f"words{n}", tmp_path)
        assert (tmp_path / name / "config.json").is_file()


def test_a_bpe_tokenizer_with_dropout_is_refused(tmp_path):
    pytest.importorskip("transformers")
    folder = tiny_folder("roberta", tmp_path / "hf" / "tiny-roberta")

    def dropout(doc):
        doc["model"]["dropout"] = 0.9
        return doc

    files = files_from_zip(zip_folder(folder, {"tokenizer.json": dropout}))
    out = tmp_path / "out"
    out.mkdir()
    text = _refused(files, out, "dropout 0.9", task="cola")
    assert "random" in text


def test_a_post_processor_of_5000_special_tokens_is_refused(tmp_path):
    pytest.importorskip("transformers")
    folder = tiny_folder("bert", tmp_path / "hf" / "tiny-bert")

    def many(doc):
        specials = doc["post_processor"]["special_tokens"]
        cls = next(iter(specials.values()))
        for i in range(5000):
            specials[f"<x{i}>"] = {**cls, "id": f"<x{i}>"}
        return doc

    files = files_from_zip(zip_folder(folder, {"tokenizer.json": many}))
    out = tmp_path / "out"
    out.mkdir()
    _refused(files, out, "5,002 special tokens", task="cola")
