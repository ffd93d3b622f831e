"""The app leads with its story: it opens on a checkpoint that is right and sure on its first
example and more uncertain out of domain (MiniLM with H-STO attention in its last layer), says in
one sentence what the visitor is looking at, and keeps the paper's word-level model one click
away."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from streamlit.testing.v1 import AppTest

from tests.app_fixtures import make_checkpoints
from uqlab.paths import SHIPPED_CHECKPOINT_DIR
from uqlab.tasks import DEFAULT_CHECKPOINT, PAPER_CHECKPOINT

APP = str(Path(__file__).resolve().parents[2] / "app.py")


def landing(at: AppTest) -> str:
    return " ".join(m.value for m in at.markdown if "What you are looking at" in m.value)


def test_a_bare_link_opens_the_minilm_model_right_and_sure_with_the_papers_one_click_away(
    monkeypatch, minilm_base
):
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(SHIPPED_CHECKPOINT_DIR))
    at = AppTest.from_file(APP, default_timeout=180)
    at.run()  # a bare link: the landing
    assert not at.exception, [e.message for e in at.exception]
    assert at.query_params["ckpt"] in (DEFAULT_CHECKPOINT, [DEFAULT_CHECKPOINT])
    said = landing(at)
    assert (
        "A pretrained MiniLM encoder fine-tuned on CoLA acceptability, in which the last "
        "attention layer samples its weights (H-STO-TRANS): each sample is one plausible "
        "reading of the text" in said
    )
    m = {x.label: x.value for x in at.metric}
    assert m["Correct / T"] == "50 / 50"  # right on every sample of the first example ...
    assert float(m["p(acceptable) mean ± variance"].split(" ± ")[0]) > 0.7  # ... and sure
    paper = next(b for b in at.button if b.label == f"The paper's model ({PAPER_CHECKPOINT})")
    paper.click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.query_params["ckpt"] in (PAPER_CHECKPOINT, [PAPER_CHECKPOINT])
    assert "trained from scratch on CoLA acceptability (the paper's word-level set-up)" in (
        landing(at)
    )
    assert any(b.label == f"Back to the MiniLM model ({DEFAULT_CHECKPOINT})" for b in at.button)


def test_without_the_minilm_base_the_app_opens_on_the_papers_model(tmp_path, monkeypatch):
    root = make_checkpoints(tmp_path, families=("trans", "hsto"))
    shutil.copytree(SHIPPED_CHECKPOINT_DIR / DEFAULT_CHECKPOINT, root / DEFAULT_CHECKPOINT)
    config = root / DEFAULT_CHECKPOINT / "config.json"
    doc = json.loads(config.read_text())
    doc["base"] = {**doc["base"], "package": "no_such_base_xyz", "distribution": "no-such-base"}
    config.write_text(json.dumps(doc))
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.query_params["ckpt"] in (PAPER_CHECKPOINT, [PAPER_CHECKPOINT])
    fresh = AppTest.from_file(APP, default_timeout=120)
    fresh.query_params["ckpt"] = DEFAULT_CHECKPOINT  # asked for by name: says why it cannot load
    fresh.run()
    assert not fresh.exception
    assert any("pip install no-such-base==0.1.0" in e.value for e in fresh.error)
