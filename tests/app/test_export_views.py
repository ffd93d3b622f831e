"""The explorer's figure exports (ui.export_views) on shipped checkpoints: SVG and PNG."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from ui.logic import keys as K
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR

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


def test_a_why_figure_file_carries_its_view_settings(monkeypatch):
    """Rendered for real (kaleido): the salience figure's SVG holds the sidebar's settings and
    the view's own (class, method, steps), and its file name says them."""
    import html
    import json
    import re

    from ui import export_views

    saved = []
    real = export_views.download
    monkeypatch.setattr(
        export_views,
        "download",
        lambda where, label, data, name, mime, **kw: (
            saved.append((name, data)) or real(where, label, data, name, mime, **kw)
        ),
    )
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params.update({"ckpt": "cola-hsto", "T": "5", "text": "a fine film", "seed": "1"})
    at.run()
    at.toggle(key=K.WHY_ON).set_value(True).run()
    at.selectbox(key=K.EXPORT_FIG).set_value("salience")
    at.radio(key=K.EXPORT_FMT).set_value("svg")
    at.button(key=K.EXPORT_RENDER).click().run()
    assert not _problems(at), _problems(at)
    name, data = next((n, d) for n, d in saved if n.endswith("-salience.svg"))
    assert name.startswith("cola-hsto-T5-seed1-") and "-method_gradient_x_input-steps_1-" in name
    found = re.search(r"<settings[^>]*>(.*?)</settings>", data.decode())
    settings = json.loads(html.unescape(found.group(1)))
    assert settings["checkpoint"] == "cola-hsto" and settings["T"] == 5 and settings["seed"] == 1
    assert settings["method"] == "gradient_x_input" and settings["steps"] == 1
    assert settings["explained"] in ("unacceptable", "acceptable") and settings["tokens"]
    assert list(settings)[-1] == "text" and settings["text"] == "a fine film"
