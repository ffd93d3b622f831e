"""AppTest of the Sweep page on tiny checkpoints."""

from __future__ import annotations

import pytest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import chart_titles, on_page

pytestmark = pytest.mark.usefixtures("app_checkpoints")


titles = chart_titles


def test_sweep_page_plots_accuracy_and_uncertainty_against_tau():
    at = on_page("app_pages/sweep.py")
    at.multiselect(key="sw_grid").set_value([0.3, 3.0])
    at.number_input(key="sw_n").set_value(10)
    at.number_input(key="sw_T").set_value(3)
    at.button(key="sw_go").click().run()
    assert not at.exception, at.exception
    assert any(x.startswith("Sweeping tau2") for x in titles(at))
    assert len(at.dataframe[0].value) == 4  # 2 values x 2 domains
