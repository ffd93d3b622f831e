"""The explorer reads a text at the length the checkpoint was trained (issue 36), and its model
card says so: cr-minilm-trans, trained at 64 tokens on a base whose positions reach 512. A
visitor may read further (``whole``), labelled as a reading it never saw in training."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import encode_lengths, use_shipped
from ui.logic import keys as K

APP = str(Path(__file__).resolve().parents[2] / "app.py")
NAME = "cr-minilm-trans"
LONG = " ".join(["a wonderful camera with a battery that lasts and lasts"] * 40)


@pytest.fixture()
def seen(monkeypatch, minilm_base) -> list[int]:
    """The max_len of every WordPiece.encode call while the app runs."""
    use_shipped(monkeypatch, NAME)
    return encode_lengths(monkeypatch)


def _open(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in {"ckpt": NAME, "text": LONG, "T": "4", "seed": "0", **params}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def test_the_explorer_reads_at_the_training_length_and_the_card_says_so(seen):
    at = _open()
    assert seen and set(seen) == {64}
    assert any("only its first 62 tokens" in w.value for w in at.warning)
    assert any("the length it was trained at (64 tokens)" in w.value for w in at.warning)
    card = " ".join(m.value for m in at.sidebar.markdown)
    assert "64 tokens, the length it was trained at (its positions reach 512)" in card
    toggle = at.toggle(key=K.WHOLE)
    assert toggle.value is False and "Read past 64 tokens" in toggle.label


def test_a_longer_reading_is_chosen_labelled_and_leaves_the_why_views_out(seen):
    at = _open()
    seen.clear()
    at.toggle(key=K.WHOLE).set_value(True).run()
    assert not at.exception, at.exception
    assert 512 in seen and at.query_params.get("whole") in ("1", ["1"])
    assert any("longer than the 64 it was trained at" in w.value for w in at.warning)
    assert any("switch the longer reading off" in i.value for i in at.info)
    again = _open(whole="1")  # the link carries it
    assert any("Read at up to 512 tokens" in w.value for w in again.warning)
    short = _open(text="a fine camera")  # nothing cut: no switch, nothing said
    assert not any(t.key == K.WHOLE for t in short.toggle)
