"""The explorer reads a text at the length the checkpoint was trained (issue 36), and its model
card says so: cr-minilm-trans, trained at 64 tokens on a base whose positions reach 512."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from uqcore.wordpiece import WordPiece
from uqlab.paths import SHIPPED_CHECKPOINT_DIR

APP = str(Path(__file__).resolve().parents[2] / "app.py")
NAME = "cr-minilm-trans"
LONG = " ".join(["a wonderful camera with a battery that lasts and lasts"] * 40)


def test_the_explorer_reads_at_the_training_length_and_the_card_says_so(monkeypatch, minilm_base):
    if not (SHIPPED_CHECKPOINT_DIR / NAME / "config.json").is_file():
        pytest.skip("the shipped MiniLM checkpoints are not here")
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(SHIPPED_CHECKPOINT_DIR))
    seen: list[int] = []
    real = WordPiece.encode

    def spy(self, text, max_len, **kw):
        seen.append(max_len)
        return real(self, text, max_len, **kw)

    monkeypatch.setattr(WordPiece, "encode", spy)
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in {"ckpt": NAME, "text": LONG, "T": "4", "seed": "0"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    assert seen and set(seen) == {64}
    assert any("only its first" in w.value for w in at.warning)
    card = " ".join(m.value for m in at.sidebar.markdown)
    assert "64 tokens, the length it was trained at (its positions reach 512)" in card
