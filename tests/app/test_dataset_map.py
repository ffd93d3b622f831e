"""AppTest of Error analysis's dataset map (ui.dataset_map) on tiny checkpoints."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import chart_titles

APP = str(Path(__file__).resolve().parents[2] / "app.py")


pytestmark = pytest.mark.usefixtures("app_checkpoints")


def _captions(at) -> str:
    return "\n".join(c.value for c in at.caption)


def test_error_analysis_draws_the_map_and_offers_its_files():
    at = AppTest.from_file(APP, default_timeout=300)
    at.query_params["ckpt"] = "cola-hsto"
    at.run()
    at.switch_page("app_pages/errors.py").run()
    at.number_input(key="err_n").set_value(15)
    at.button(key="err_go").click().run()
    assert not at.exception, at.exception
    assert any("last-layer [CLS] features, PCA" in t for t in chart_titles(at))
    assert "Computed here: no stored map" in _captions(at)  # tiny checkpoints have none
    labels = [b.proto.label for b in at.get("download_button")]
    assert "The map's points (CSV)" in labels and "The map (SVG)" in labels
    at.selectbox(key="map_color").set_value("domain").run()
    assert not at.exception
