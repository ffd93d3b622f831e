"""The explorer's figure exports (ui.explore_views) on shipped checkpoints: SVG and PNG."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.logic import keys as K
from uqlab.paths import SHIPPED_CHECKPOINT_DIR

APP = str(Path(__file__).resolve().parents[2] / "app.py")


@pytest.fixture(autouse=True)
def _shipped(monkeypatch):
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(SHIPPED_CHECKPOINT_DIR))


def _problems(at: AppTest) -> list[str]:
    """Exceptions and error boxes on the page (a checkpoint that cannot load shows one)."""
    return [str(e) for e in at.exception] + [e.value for e in at.error]


@pytest.mark.parametrize("name", ["cola-hsto", "imdb-minilm-hsto"])
def test_figures_export_as_svg_and_png(name):
    """The explorer's Render button writes both formats (kaleido with the server's Chromium)."""
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"ckpt": name, "T": "5", "text": "a fine film, well acted", "seed": "1"})
    at.run()
    for fmt in ("svg", "png"):
        at.radio(key=K.EXPORT_FMT).set_value(fmt)
        at.button(key=K.EXPORT_RENDER).click().run()
        assert not _problems(at), _problems(at)
        labels = [b.proto.label for b in at.get("download_button")]
        assert any(label.endswith(f".{fmt}") for label in labels), labels
