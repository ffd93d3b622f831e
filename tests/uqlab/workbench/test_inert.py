"""Text a visitor or a file names reaches a figure as text (uqlab.workbench.inert): never markup,
never a link (issue 31). The escaper of the pages' own text: tests/app/logic/test_format.py.

Defects on main 0bbfa09: an uploaded ``id2label`` of ``[sign in](https://...)`` showed as a link
on the explorer's gold-label control, and a link's ``?ckpt=[Click here](https://...)`` had its
bare URL autolinked inside the app's own warning (escaping alone does not stop GitHub's
autolinks). The pages themselves: tests/browser/test_hostile_uploads.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np

from uqlab.workbench import figures
from uqlab.workbench.inert import inert, inert_text
from viz import learn, why

VIZ = Path(__file__).resolve().parents[3] / "viz"
NOT_WRAPPED = {"for_export", "centroid_figure"}  # a copy of a built figure; the Learn page's own


def test_inert_text_keeps_the_apps_own_tags_only():
    assert inert_text("a<br>b <b>c</b> <extra></extra>") == "a<br>b <b>c</b> <extra></extra>"
    assert (
        inert_text("<a href='https://evil.example'>x</a>")
        == "&lt;a href='https://evil.example'>x&lt;/a>"
    )
    assert inert_text("<span style='x'>y</span>") == "&lt;span style='x'>y&lt;/span>"


def test_every_figure_builder_makes_its_text_inert():
    """Every public builder of viz/ that returns a figure is wrapped by phone_titles (which
    passes the figure through uqlab.workbench.inert.inert), so no new builder can forget it."""
    missing = []
    for module in (figures, learn, why):
        tree = ast.parse(Path(module.__file__).read_text())
        for node in tree.body:
            if (
                isinstance(node, ast.FunctionDef)
                and not node.name.startswith("_")
                and "Figure" in ast.unparse(node.returns or ast.Constant(""))
                and node.name not in NOT_WRAPPED
            ):
                if not hasattr(getattr(module, node.name), "__wrapped__"):
                    missing.append(f"{module.__name__}.{node.name}")
    assert not missing, missing


def test_a_hostile_token_and_label_reach_a_figure_as_text():
    evil = "<a href='https://evil.example'>x</a>"
    fig = figures.attention_panels({"mean": np.eye(2, dtype=np.float32)}, ["ok", evil], "t")
    assert "<a href" not in fig.to_json() and "evil.example" in fig.to_json()
    hist = figures.prediction_histogram(np.array([[0.3, 0.7]] * 4), ("neg", evil), 1, False)
    assert "<a href" not in hist.to_json()
    names = np.array(["neg", evil])
    for categorical, colour in ((True, names), (False, np.array([0.1, 0.2]))):
        points = why.dataset_map(
            np.zeros((2, 2)), colour, ["fine", evil], "map", "MI", categorical, np.arange(2)
        )
        assert "<a href" not in points.to_json()


def test_inert_returns_the_same_figure_when_nothing_needs_it():
    fig = figures.running_mean_figure(np.array([0.5, 0.6]), np.array([0.1, 0.1]), "pos")
    assert inert(fig) is fig
