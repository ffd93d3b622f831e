"""AppTest of the Table 3 page on the shipped MiniLM checkpoints."""

from __future__ import annotations

import pytest
from streamlit.testing.v1 import AppTest

from tests import helpers
from tests.helpers import use_shipped

HSTO, BAM = "cola-minilm-hsto", "cola-minilm-bam"
TEXT = "The playwright's script was unplayable 🙂."


@pytest.fixture(autouse=True)
def shipped(monkeypatch, minilm_base):
    use_shipped(monkeypatch, HSTO)


def open_link(**params) -> AppTest:
    return helpers.open_link(timeout=180, **{"text": TEXT, "T": "10", "seed": "1", **params})


def test_table3_runs_on_the_papers_sentences():
    at = open_link(ckpt=HSTO, label="1")
    at.switch_page("app_pages/table3.py").run()
    at.button[0].click().run()
    assert not at.exception, at.exception
    assert len(at.dataframe) == 2 and any("correct/T" in c for c in at.dataframe[0].value.columns)
