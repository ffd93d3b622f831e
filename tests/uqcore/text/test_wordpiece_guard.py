"""The tokenizer guard of uqcore.text.wordpiece (issue 31, item 4): the allow-list of the
``tokenizer.json`` families this app reads (the MiniLM base passes it), a Rust panic while
encoding is an InputError, and the text given to the tokenizer is bounded. Uploads refused by the
allow-list: tests/uqlab/models/test_intake_tokenizer.py; the explorer's message when encoding
panics: tests/app/test_explore_tokenizer.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.hf_tiny import ARCHS, tiny_folder
from uqcore.exceptions import InputError
from uqcore.text.wordpiece import MAX_ENCODE_CHARS, WordPiece, check_tokenizer_json

pytest.importorskip("transformers")
BACKTRACKS = {
    "type": "Split",
    "pattern": {"Regex": r"(\w+\s?)+$"},
    "behavior": "Isolated",
    "invert": False,
}


@pytest.fixture(scope="module")
def hf_root(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    for arch in ARCHS:
        tiny_folder(arch, root / f"tiny-{arch}")
    return root


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

    def get_vocab_size(self) -> int:
        return 4

    def encode(self, text: str, add_special_tokens: bool = True):
        self.seen.append(len(text))
        if self.error is not None:
            raise self.error
        if not add_special_tokens:
            return type("Enc", (), {"ids": [3], "tokens": ["x"], "offsets": [(0, 1)]})()
        return type(
            "Enc",
            (),
            {
                "ids": [1, 3, 2],
                "tokens": ["[CLS]", "x", "[SEP]"],
                "offsets": [(0, 0), (0, 1), (0, 0)],
            },
        )()


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
    assert fake.seen == [1, 1, MAX_ENCODE_CHARS]  # the template's probe ("a", twice), the text
