"""The app on the shipped MiniLM checkpoints: WordPiece labels, every view of H-STO and BAM,
Table 3, Compare across tokenizations, long text, and adapter uploads."""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import chart_titled, chart_titles
from ui.logic.compare import mean_attention
from ui.logic.compute import explore
from uqcore.checkpoint import load_checkpoint
from uqcore.settings import SamplingSettings
from uqlab.paths import SHIPPED_CHECKPOINT_DIR
from uqlab.upload import UploadError, files_from_zip, install

APP = str(Path(__file__).resolve().parent.parent / "app.py")
HSTO, BAM = "cola-minilm-hsto", "cola-minilm-bam"
TEXT = "The playwright's script was unplayable 🙂."


@pytest.fixture(autouse=True)
def shipped(monkeypatch, minilm_base):
    if not (SHIPPED_CHECKPOINT_DIR / HSTO / "config.json").is_file():
        pytest.skip("the shipped MiniLM checkpoints are not here")
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(SHIPPED_CHECKPOINT_DIR))


def open_link(**params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=180)
    for key, value in {"text": TEXT, "T": "10", "seed": "1", **params}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


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
    at = open_link(ckpt=BAM, text=" ".join(["nora sent the book to london"] * 14))  # 86 tokens
    spec = chart_titled(at, "Prior vs")
    assert len(spec["data"][0]["x"]) == 64 and spec["layout"]["xaxis"]["showticklabels"]
    assert any(s.label.startswith("First token shown") for s in at.slider)


def test_a_text_longer_than_512_pieces_is_cut_and_said_so():
    at = open_link(ckpt=HSTO, text="good " * 600)
    warning = " ".join(w.value for w in at.warning)
    assert "only its first 510 tokens are used (90 dropped)" in warning


def test_table3_runs_on_the_papers_sentences():
    at = open_link(ckpt=HSTO, label="1")
    at.switch_page("app_pages/table3.py").run()
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert len(at.dataframe) == 2 and any("correct/T" in c for c in at.dataframe[0].value.columns)


def test_compare_keeps_each_tokenization_on_its_own_axes():
    results = {
        name: explore(load_checkpoint(SHIPPED_CHECKPOINT_DIR / name), TEXT, 3, 0,
                      SamplingSettings()).for_label(1)
        for name in ("cola-hsto", HSTO, BAM)
    }  # fmt: skip
    groups = mean_attention(results, 0, 0, 64)
    assert [sorted(panels) for _, panels in groups] == [["cola-hsto"], sorted([HSTO, BAM])]
    for tokens, panels in groups:
        assert all(m.shape == (len(tokens), len(tokens)) for m in panels.values())
    assert "##play" in groups[1][0] and "##play" not in groups[0][0]


def _zip(folder: Path, config: dict | None = None) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for f in sorted(folder.iterdir()):
            if f.is_file():
                data = json.dumps(config) if config and f.name == "config.json" else f.read_bytes()
                z.writestr(f"{folder.name}/{f.name}", data)
    return buf.getvalue()


def test_an_adapter_checkpoint_uploads_and_a_missing_base_is_named(tmp_path):
    source = SHIPPED_CHECKPOINT_DIR / HSTO
    assert install(files_from_zip(_zip(source)), HSTO, tmp_path) == f"upload-{HSTO}"
    assert load_checkpoint(tmp_path / f"upload-{HSTO}").config.backbone == "bert"
    doc = json.loads((source / "config.json").read_text())
    doc["base"] = {**doc["base"], "package": "no_such_base_xyz", "distribution": "no-such-base"}
    with pytest.raises(UploadError, match="pip install no-such-base"):
        install(files_from_zip(_zip(source, doc)), "other", tmp_path)
    assert not (tmp_path / "upload-other").exists()


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
