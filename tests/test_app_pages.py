"""AppTest of the dataset-scale, compare, sweep and learn pages on tiny checkpoints."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlparse

import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import chart_titles

APP = str(Path(__file__).resolve().parent.parent / "app.py")


pytestmark = pytest.mark.usefixtures("app_checkpoints")


def on_page(page: str, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=300)
    for key, value in {"ckpt": "cola-hsto", **params}.items():
        at.query_params[key] = value
    at.run()
    at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


titles = chart_titles


def test_results_page_shows_tables_reliability_and_roc():
    at = on_page("app_pages/results.py")
    assert at.dataframe  # the Table 2 rows of the checkpoints
    at.number_input(key="res_n").set_value(20)
    at.multiselect(key="res_ckpts").set_value(["cola-hsto", "cola-trans"])
    at.button(key="res_go").click().run()
    assert not at.exception, at.exception
    t = titles(at)
    assert any(x.startswith("Reliability diagram") for x in t)
    assert any(x.startswith("Out-of-domain detection by") for x in t)
    assert any(x.startswith("Risk-coverage") for x in t)
    at.selectbox(key="res_score").set_value("energy").run()  # a logit score picks up too
    assert not at.exception and any("energy" in x for x in titles(at))
    assert sum(x.endswith("by domain") for x in t) == 2
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Download this table (CSV)", "Download the per-example values (CSV)"]


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


def test_results_keeps_a_checkpoint_choice_when_the_task_changes(tmp_path, monkeypatch):
    """Defect: the checkpoint list emptied when the task changed ("Pick checkpoints")."""
    from tests.app_fixtures import make_checkpoints
    from uqlab.tasks import TASKS

    other = next(t for t in TASKS if t != "cola")
    root = make_checkpoints(tmp_path, families=("trans", "hsto"))
    make_checkpoints(root, prefix=other, task=other, families=("trans", "hsto"))
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(root))
    at = on_page("app_pages/results.py")
    assert at.multiselect(key="res_ckpts").value
    at.radio[0].set_value(other).run()
    assert not at.exception
    chosen = at.multiselect(key="res_ckpts").value
    assert chosen and all(n.startswith(f"{other}-") for n in chosen)
    at.radio[0].set_value("cola").run()
    chosen = at.multiselect(key="res_ckpts").value
    assert chosen and all(n.startswith("cola-") for n in chosen)


def test_compare_page_shows_every_family_of_the_task():
    at = on_page("app_pages/compare.py", T="20")
    rows = at.dataframe[0].value
    assert len(rows) == 8 and rows["method"].nunique() == 8
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels[0] == "Download this table (CSV)" and labels[1].startswith("Download every")
    assert any(x.startswith("p(") and "one row per checkpoint" in x for x in titles(at))
    assert any(x.startswith("Layer") for x in titles(at))


def test_sweep_page_plots_accuracy_and_uncertainty_against_tau():
    at = on_page("app_pages/sweep.py")
    at.multiselect(key="sw_grid").set_value([0.3, 3.0])
    at.number_input(key="sw_n").set_value(10)
    at.number_input(key="sw_T").set_value(3)
    at.button(key="sw_go").click().run()
    assert not at.exception, at.exception
    assert any(x.startswith("Sweeping tau2") for x in titles(at))
    assert len(at.dataframe[0].value) == 4  # 2 values x 2 domains


def test_learn_page_builds_the_ideas_in_steps():
    at = on_page("app_pages/learn.py")
    assert [h.value[:2] for h in at.header] == ["1.", "2.", "3.", "4.", "5.", "6."]
    assert any("log" in x.value for x in at.get("latex"))  # g = -log(-log u), written out
    em = next(c for c in at.get("plotly_chart") if "EM step" in c.proto.spec)
    at.slider(key="l_em").set_value(8).run()
    assert not at.exception
    assert next(c for c in at.get("plotly_chart") if "EM step" in c.proto.spec).proto.spec != \
        em.proto.spec  # fmt: skip
    before = [m.value for m in at.metric]
    at.slider(key="l_spread").set_value(2.5).run()
    assert [m.value for m in at.metric] != before


def test_a_page_gives_its_run_slot_back_when_it_stops_early():
    """At most PAGE_SLOTS page runs at once; one that ends in st.stop (error analysis before
    Compute) or a rerun must release its slot, or the server would lock up after a few."""
    from ui import cached

    for _ in range(cached.PAGE_SLOTS + 1):
        at = on_page("app_pages/errors.py")  # stops at "Press Compute"
        assert any("Press Compute" in i.value for i in at.info)
    busy = cached.gate().snapshot()
    assert busy["pages_used"] == 0 and not busy["running"] and not busy["waiting"], busy
