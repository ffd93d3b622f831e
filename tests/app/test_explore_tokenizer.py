"""The explorer shows a message, not a spinner, when the tokenizer panics while encoding."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from uqcore.text.wordpiece import WordPiece

pytest.importorskip("transformers")


APP = str(Path(__file__).resolve().parents[2] / "app.py")


class PanicException(BaseException):  # the name pyo3 gives its panics
    pass


def test_the_explorer_shows_a_message_when_encoding_panics(monkeypatch, minilm_base, tmp_path):
    """Every encode on the explorer panics: one line of error, no exception, no spinner."""
    source = Path(__file__).resolve().parents[2] / "assets" / "checkpoints" / "cola-minilm-hsto"
    if not (source / "config.json").is_file():
        pytest.skip("the shipped MiniLM checkpoint is not here")
    shutil.copytree(source, tmp_path / source.name)  # a fresh folder: a fresh cached load
    init = WordPiece.__init__

    class Panicky:
        def __init__(self, tok) -> None:
            self._tok = tok

        def __getattr__(self, name):
            return getattr(self._tok, name)

        def encode(self, text, add_special_tokens=True):
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
