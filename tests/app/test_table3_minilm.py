"""AppTest of the Table 3 page on the shipped MiniLM checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR

APP = str(Path(__file__).resolve().parents[2] / "app.py")


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


def test_table3_runs_on_the_papers_sentences():
    at = open_link(ckpt=HSTO, label="1")
    at.switch_page("app_pages/table3.py").run()
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert len(at.dataframe) == 2 and any("correct/T" in c for c in at.dataframe[0].value.columns)
