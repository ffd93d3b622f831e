"""AppTest of the Error analysis page on tiny checkpoints."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlparse

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import on_page

APP = str(Path(__file__).resolve().parents[2] / "app.py")


pytestmark = pytest.mark.usefixtures("app_checkpoints")


def test_error_analysis_shows_slices_side_by_side():
    at = on_page("app_pages/errors.py", seed="3")
    at.number_input(key="err_n").set_value(15)
    at.button(key="err_go").click().run()
    slices = at.dataframe[-1].value
    assert list(slices.columns) == ["slice", "examples", "accuracy", "ECE", "mean MI"]
    assert slices["examples"].sum() == 30  # every computed example, in one length slice each
    at.selectbox(key="err_slice_by").set_value("word or pattern").run()
    at.text_input(key="err_slice_pattern").set_value("the").run()
    got = at.dataframe[-1].value
    assert set(got["slice"]) <= {"contains 'the'", "without 'the'"} and got["examples"].sum() == 30
    at.text_input(key="err_slice_pattern").set_value("(oops").run()
    assert any("Not a regular expression" in i.value for i in at.info) and not at.exception


def test_error_analysis_sorts_filters_and_links_to_the_same_numbers():
    at = on_page("app_pages/errors.py", seed="3")
    at.number_input(key="err_n").set_value(15)
    at.button(key="err_go").click().run()
    assert not at.exception, at.exception
    at.selectbox(key="err_sort").set_value("mutual information").run()
    table = at.dataframe[0].value
    assert list(table["mi"]) == sorted(table["mi"], reverse=True)
    assert list(table.columns[:2]) == ["open", "mi"]  # the sorted-by column is never off-screen
    first = table.iloc[0]
    params = dict(parse_qsl(urlparse(first["open"]).query))
    assert params["T"] == "10" and params["seed"] == "3"
    explorer = AppTest.from_file(APP, default_timeout=300)
    for key, value in params.items():
        explorer.query_params[key] = value
    explorer.run()
    m = {x.label: x.value for x in explorer.metric}
    gold = next(k for k in m if k.endswith("mean ± variance"))
    assert m[gold].startswith(f"{first['p_gold']:.3f} ± ")
    assert m["Correct / T"] == first["correct"].replace("/", " / ")
    # the page's own summary of the chosen row (the first) reads exactly like the explorer
    assert {x.label: x.value for x in at.metric} == m
    at.selectbox(key="err_view").set_value("confidently wrong (p(gold) < 0.2)").run()
    assert not at.exception
    assert at.dataframe or any("No example matches" in i.value for i in at.info)


def test_error_analysis_filters_survive_a_recompute():
    """Defect: after changing T and recomputing, the widgets showed "all / mutual information"
    while the table kept the old "wrong" filter sorted by p(gold)."""
    at = on_page("app_pages/errors.py", seed="3")
    at.number_input(key="err_n").set_value(15)
    at.button(key="err_go").click().run()
    at.selectbox(key="err_view").set_value("wrong").run()
    at.selectbox(key="err_sort").set_value("p(gold), lowest first").run()
    at.number_input(key="err_T").set_value(5).run()  # the table waits for Compute
    at.button(key="err_go").click().run()
    assert not at.exception, at.exception
    assert at.selectbox(key="err_view").value == "wrong"
    assert at.selectbox(key="err_sort").value == "p(gold), lowest first"
    if at.dataframe:
        table = at.dataframe[0].value
        assert (table["gold"] != table["pred"]).all()
        assert list(table["p_gold"]) == sorted(table["p_gold"])
    at.selectbox(key="err_view").set_value("all").run()
    assert at.selectbox(key="err_view").value == "all"
    assert len(at.dataframe[0].value) == 30  # 15 per domain
