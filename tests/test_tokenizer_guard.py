"""Uploaded tokenizers (issue 31, item 4): a ``tokenizer.json`` outside the allow-list of the
families this app reads (a backtracking Split, a Replace regex, another model type, a deep
Sequence) is refused when a Hugging Face zip is installed; the supported ones still load; a Rust
panic while encoding is an InputError, shown on the explorer as a message (not a spinner)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import zip_folder
from tests.hf_tiny import ARCHS, tiny_folder
from uqcore.errors import InputError
from uqcore.registry import load
from uqcore.wordpiece import MAX_ENCODE_CHARS, WordPiece, check_tokenizer_json
from uqlab.upload import UploadError, files_from_zip, install

pytest.importorskip("transformers")
APP = str(Path(__file__).resolve().parent.parent / "app.py")
BACKTRACKS = {"type": "Split", "pattern": {"Regex": r"(\w+\s?)+$"}, "behavior": "Isolated",
              "invert": False}  # fmt: skip
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


def test_the_minilm_base_passes_the_allow_list(minilm_base):
    check_tokenizer_json(json.loads((Path(minilm_base) / "tokenizer.json").read_text("utf-8")))
    tok = WordPiece.from_folder(minilm_base)
    assert tok.encode("the playwright", 16).tokens == ["[CLS]", "the", "playwright", "[SEP]"]


class PanicException(BaseException):  # the name pyo3 gives its panics
    pass


class FakeTokenizer:
    """Enough of ``tokenizers.Tokenizer`` for :class:`WordPiece`; ``encode`` raises ``error``."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error, self.seen = error, []

    def no_truncation(self) -> None: ...

    def no_padding(self) -> None: ...

    def token_to_id(self, token: str) -> int:
        return ("[PAD]", "[CLS]", "[SEP]", "[UNK]").index(token)

    def encode(self, text: str):
        self.seen.append(len(text))
        if self.error is not None:
            raise self.error
        return type("Enc", (), {"ids": [1, 3, 2], "tokens": ["[CLS]", "x", "[SEP]"],
                                "offsets": [(0, 0), (0, 1), (0, 0)]})()  # fmt: skip


def test_a_panic_inside_the_tokenizer_is_an_input_error():
    with pytest.raises(InputError, match="crashed"):
        WordPiece(FakeTokenizer(PanicException("Onig: retry-limit-in-match over"))).encode("a", 8)
    with pytest.raises(InputError, match="could not read"):
        WordPiece(FakeTokenizer(RuntimeError("bad"))).encode("a", 8)
    for passes in (KeyboardInterrupt(), SystemExit(1)):
        with pytest.raises(type(passes)):
            WordPiece(FakeTokenizer(passes)).encode("a", 8)


def test_the_real_panic_of_a_backtracking_split_is_an_input_error(hf_root, tmp_path):
    """The tokenizer built directly (past the allow-list): its real PanicException."""
    from tokenizers import Tokenizer

    doc = json.loads((hf_root / "tiny-bert" / "tokenizer.json").read_text("utf-8"))
    tok = WordPiece(Tokenizer.from_str(json.dumps({**doc, "pre_tokenizer": BACKTRACKS})))
    with pytest.raises(InputError, match="crashed"):
        tok.encode("a" * 60 + "!", 16)


def test_the_text_given_to_the_tokenizer_is_bounded():
    fake = FakeTokenizer()
    WordPiece(fake).encode("a" * (MAX_ENCODE_CHARS * 3), 8)
    assert fake.seen == [MAX_ENCODE_CHARS]


def test_the_explorer_shows_a_message_when_encoding_panics(monkeypatch, minilm_base, tmp_path):
    """Every encode on the explorer panics: one line of error, no exception, no spinner."""
    source = Path(__file__).resolve().parent.parent / "assets" / "checkpoints" / "cola-minilm-hsto"
    if not (source / "config.json").is_file():
        pytest.skip("the shipped MiniLM checkpoint is not here")
    shutil.copytree(source, tmp_path / source.name)  # a fresh folder: a fresh cached load
    init = WordPiece.__init__

    class Panicky:
        def __init__(self, tok) -> None:
            self._tok = tok

        def __getattr__(self, name):
            return getattr(self._tok, name)

        def encode(self, text):
            raise PanicException("Onig: Regex search error: retry-limit-in-match over")

    def panicky_init(self, tokenizer, *args, **kwargs):
        init(self, tokenizer, *args, **kwargs)
        self._tok = Panicky(self._tok)

    monkeypatch.setattr(WordPiece, "__init__", panicky_init)
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(tmp_path))
    at = AppTest.from_file(APP, default_timeout=120)
    at.query_params.update(ckpt=source.name, text="a sentence nobody stored", T="5", seed="3")
    at.run()
    assert not at.exception, at.exception
    assert any("tokenizer crashed" in e.value for e in at.error), [e.value for e in at.error]
