"""The figures of "why is it unsure?" (viz.why): the head grid's title stays above its column
titles."""

from __future__ import annotations

import numpy as np

from uqlab.workbench.titles import TITLE_PAD
from viz import why as W


def test_the_head_grid_title_stays_above_its_column_titles():
    """Defect (issue 34): the grid's two-line title, centred in the top margin, ran into the
    heads' column titles (H0, H1, ...)."""
    maps = np.random.default_rng(0).random((4, 8, 5, 5))  # [layers, heads, K, K]
    for title in ("Mean attention, every layer and head", "Std of the attention, " * 4):
        fig = W.head_grid(maps, list("abcde"), title, "mean")
        lines = fig.layout.title.text.count("<br>") + 1
        assert fig.layout.title.yanchor == "top" and fig.layout.title.yref == "container"
        columns = [a for a in fig.layout.annotations if a.text.startswith("H")]
        assert len(columns) == 8 and all(a.y == 1 and a.yanchor == "bottom" for a in columns)
        # the title's lines (20 px each, from TITLE_PAD down) end above a 16 px line of them
        assert fig.layout.margin.t >= TITLE_PAD + 20 * lines + 16
        assert fig.layout.height >= fig.layout.margin.t + 62 * 4


def test_the_head_grid_has_one_fixed_scale_and_a_flat_bar():
    """Issue 45: the std grid was scaled to its own largest value, so a spread under 0.01 was
    drawn as dark orange "disagreement". The mean runs from 0 to 1 and the std from 0 to
    STD_MAX (0.5) whatever the maps hold; the bar lies flat under the grid, ticks level."""
    from uqlab.workbench.figures import STD_MAX

    rng = np.random.default_rng(0)
    for scale, top in (("mean", 1.0), ("std", STD_MAX)):
        for spread in (0.001, 0.3):
            maps = spread * rng.random((2, 3, 4, 4))  # [layers, heads, K, K]
            fig = W.head_grid(maps, list("abcd"), "t", scale)
            assert {(t.zmin, t.zmax) for t in fig.data} == {(0, top)}
            shown = [t for t in fig.data if t.showscale]
            assert len(shown) == 1
            bar = shown[0].colorbar
            assert bar.orientation == "h" and bar.tickangle == 0 and bar.y < 0
            assert list(bar.tickvals) == [0.0, top / 2, top]
            assert fig.layout.margin.b >= 60  # room under the grid for the bar
