"""Every command reads a text at the length its checkpoint was trained (issue 36): the shipped
cr-minilm-trans was trained at 64 tokens on a base whose positions reach 512; evaluate, predict,
the stored samples, the map, the first screen's and the lesson's measurements all encode at 64.
The explorer page: tests/app/test_explore_reading_length.py."""

from __future__ import annotations

import pytest

from tests.helpers import encode_lengths, use_shipped
from uqcore.checkpoint import load_checkpoint, read_length
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR

NAME = "cr-minilm-trans"
LONG = " ".join(["a wonderful camera with a battery that lasts and lasts"] * 40)


@pytest.fixture()
def lengths(monkeypatch, minilm_base, data_dir):
    """The max_len of every WordPiece.encode call made while the test runs."""
    use_shipped(monkeypatch, NAME)
    monkeypatch.setenv("UQ_DATA_DIR", str(data_dir))
    return encode_lengths(monkeypatch)


def _ck():
    return load_checkpoint(SHIPPED_CHECKPOINT_DIR / NAME, shared_weights=True)


def test_the_reading_length_is_the_training_length_below_the_position_table():
    assert read_length(512, {"config": {"max_len": 64}}) == 64
    assert read_length(48, {"config": {"max_len": 64}}) == 48  # capped by the positions
    assert read_length(512, {}) == read_length(512, None) == 512  # an import: the positions
    assert read_length(512, {"config": {"max_len": True}}) == 512  # not a length
    assert read_length(512, {"config": "x"}) == 512


def test_evaluate_reads_at_the_training_length(lengths):
    from uqlab.evaluate import evaluate_checkpoint

    ck = _ck()
    assert (ck.read_len, ck.config.max_len) == (64, 512)
    m = evaluate_checkpoint(ck, None, T=2, limit=6, per_domain=1, progress=False)
    assert m["read_len"] == 64 and lengths and set(lengths) == {64}
    cut = [b for b in m["ood_detection_by_length"]["max_prob"] if b["tokens"] == [64, 65]]
    assert cut and cut[0]["ood"] == 6  # six IMDB reviews, every one cut at 64 tokens


def test_predict_reads_at_the_training_length(lengths, tmp_path):
    from uqlab.predict import main

    rows = tmp_path / "rows.csv"
    rows.write_text("text\n" + "\n".join([LONG, "short one"]) + "\n", encoding="utf-8")
    args = ["--ckpt", NAME, "--root", str(SHIPPED_CHECKPOINT_DIR), "--file", str(rows)]
    assert main([*args, "--out", str(tmp_path / "out"), "--samples", "2", "--quiet"]) == 0
    assert lengths and set(lengths) == {64}


def test_stored_samples_and_the_map_read_at_the_training_length(lengths):
    from uqlab import feature_map
    from uqlab.evaluation import stored

    ck = _ck()
    stored.write(ck, T=2, reuse=False, sink=lambda path, data: None)
    feature_map.write(ck, sink=lambda path, data: None)
    assert lengths and set(lengths) == {64}


def test_the_first_screen_and_the_lesson_read_at_the_training_length(lengths):
    from uqlab.evaluation import first_screen, lesson_links

    first_screen.measure(NAME, None, rows=3, T=2, seed=0)
    lesson_links.dev_rows("cr", 3, _ck())
    assert lengths and set(lengths) == {64}
