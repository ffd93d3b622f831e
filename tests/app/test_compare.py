"""AppTest of the Compare page on tiny checkpoints."""

from __future__ import annotations

import json

import pytest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import chart_titles, on_page
from uqcore.families import FAMILY_NAMES
from uqcore.families import title as family_title

pytestmark = pytest.mark.usefixtures("app_checkpoints")


titles = chart_titles


def test_compare_page_shows_every_family_of_the_task():
    at = on_page("app_pages/compare.py", T="20")
    rows = at.dataframe[0].value
    assert len(rows) == len(FAMILY_NAMES) and rows["method"].nunique() == len(FAMILY_NAMES)
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[0] == "Download this table (CSV)" and labels[1].startswith("Download every")
    assert any(x.startswith("p(") and "one row per checkpoint" in x for x in titles(at))


def test_each_checkpoint_gets_its_own_attention_map_titled_by_its_name():
    """One figure a checkpoint (a grid stacks them one a row on a phone instead of four slivers
    in one figure), titled by the checkpoint's name over its method's."""
    at = on_page("app_pages/compare.py", T="20")
    names = list(at.dataframe[0].value["checkpoint"])
    charts = [json.loads(c.proto.spec) for c in at.get("plotly_chart")][1:]
    assert [c["layout"]["title"]["text"] for c in charts] == names
    methods = [c["layout"]["annotations"][0]["text"] for c in charts]
    assert methods == [family_title(n.removeprefix("cola-")) for n in names]


def test_the_histograms_names_sit_in_gaps_of_their_own():
    """Each row's name lies between the row above's bottom and its own top, in a gap at least
    as tall as the name's line, so it never lands on the bars above (a phone's Compare)."""
    at = on_page("app_pages/compare.py", T="20")
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    layout = spec["layout"]
    plot_px = layout["height"] - layout["margin"]["t"] - layout["margin"]["b"]
    axes = sorted(
        (v["domain"] for k, v in layout.items() if k.startswith("yaxis")), key=lambda d: -d[1]
    )
    names = sorted(layout["annotations"], key=lambda a: -a["y"])
    assert len(axes) == len(names) == len(FAMILY_NAMES)
    for above, row, name in zip(axes, axes[1:], names[1:], strict=False):
        assert (above[0] - row[1]) * plot_px >= 20
        assert row[1] <= name["y"] < above[0]
