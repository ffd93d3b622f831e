"""The explorer on the shipped MiniLM checkpoints: WordPiece labels, every view of H-STO and BAM,
long text, the conformal set, temperature scaling."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests import helpers
from tests.helpers import chart_titled, chart_titles, use_shipped

HSTO, BAM = "cola-minilm-hsto", "cola-minilm-bam"
TEXT = "The playwright's script was unplayable 🙂."


@pytest.fixture(autouse=True)
def shipped(monkeypatch, minilm_base):
    use_shipped(monkeypatch, HSTO)


def open_link(**params) -> AppTest:
    return helpers.open_link(timeout=180, **{"text": TEXT, "T": "10", "seed": "1", **params})


titles = chart_titles


def axis_labels(at: AppTest, title_start: str) -> list[str]:
    spec = chart_titled(at, title_start)
    return [str(v) for trace in spec["data"] for v in trace.get("y", [])]


def test_hsto_shows_histogram_attention_and_centroids_on_wordpiece_pieces():
    at = open_link(ckpt=HSTO, label="1")
    assert {m.label for m in at.metric} >= {"Correct / T", "Mutual information"}
    shown = titles(at)
    assert any(t.startswith("p(acceptable) per sample") for t in shown)
    assert "Centroid assignments of the keys" in shown
    labels = axis_labels(at, "Centroid assignments")
    assert "8:##play" in labels and "10:🙂⟨unk⟩" in labels  # pieces marked; [UNK] as its character
    assert any("## marks a piece" in c.value for c in at.caption)
    assert any("not in the model's vocabulary" in i.value for i in at.info)


def test_bam_shows_prior_versus_posterior_and_kl():
    at = open_link(ckpt=BAM)
    shown = titles(at)
    assert any(t.startswith("Prior vs posterior attention") for t in shown)
    assert any(t.startswith("Mean KL(posterior ‖ prior) per token pair") for t in shown)


def test_bam_over_64_tokens_shows_a_labelled_window_of_the_keys():
    text = " ".join(["nora sent the book to london"] * 14)  # 86 tokens: read past the trained 64
    at = open_link(ckpt=BAM, text=text, whole="1")
    spec = chart_titled(at, "Prior vs")
    assert len(spec["data"][0]["x"]) == 64 and spec["layout"]["xaxis"]["showticklabels"]
    assert any(s.label.startswith("First token shown") for s in at.slider)


def test_a_long_text_is_cut_at_the_training_length_or_the_positions_and_said_so():
    at = open_link(ckpt=HSTO, text="good " * 600)
    warning = " ".join(w.value for w in at.warning)
    assert "only its first 62 tokens are used (538 dropped)" in warning  # trained at 64
    at = open_link(ckpt=HSTO, text="good " * 600, whole="1")  # read as far as positions go
    warning = " ".join(w.value for w in at.warning)
    assert "only its first 510 tokens are used (90 dropped)" in warning
    assert "longer than the 64 it was trained at" in warning


def test_the_explorer_shows_the_sentences_conformal_set():
    at = open_link(ckpt=HSTO, label="1")
    m = {x.label: x.value for x in at.metric}
    shown = m["Prediction set at 90% coverage"]
    assert shown.startswith("{") and ("acceptable" in shown or "empty" in shown)
    at.slider(key="conf_coverage").set_value(0.99).run()
    wide = {x.label: x.value for x in at.metric}["Prediction set at 99% coverage"]
    assert wide.count(",") >= shown.count(",")  # more coverage, never a smaller set


def test_temperature_scaling_changes_the_probabilities_not_the_predictions():
    plain = open_link(ckpt=HSTO, label="1")
    scaled = open_link(ckpt=HSTO, label="1", scaled="1")
    before = {m.label: m.value for m in plain.metric}
    after = {m.label: m.value for m in scaled.metric}
    assert after["Correct / T"] == before["Correct / T"]  # argmax per sample unchanged
    assert after["p(acceptable) mean ± variance"] != before["p(acceptable) mean ± variance"]
    assert any("Temperature scaling is on" in c.value for c in scaled.caption)
    assert scaled.query_params["scaled"] in ("1", ["1"])
