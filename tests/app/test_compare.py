"""AppTest of the Compare page on tiny checkpoints."""

from __future__ import annotations

import pytest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import chart_titles, on_page

pytestmark = pytest.mark.usefixtures("app_checkpoints")


titles = chart_titles


def test_compare_page_shows_every_family_of_the_task():
    at = on_page("app_pages/compare.py", T="20")
    rows = at.dataframe[0].value
    assert len(rows) == 8 and rows["method"].nunique() == 8
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[0] == "Download this table (CSV)" and labels[1].startswith("Download every")
    assert any(x.startswith("p(") and "one row per checkpoint" in x for x in titles(at))
    assert any(x.startswith("Layer") for x in titles(at))
