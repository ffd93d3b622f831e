"""Issue 24, point 5 (the walk's defects): AppTest of each fix on tiny checkpoints."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import chart_titled

APP = str(Path(__file__).resolve().parent.parent / "app.py")
LINK = {"ckpt": "cola-hsto", "text": "John is tall on several occasions.", "label": "0",
        "T": "5", "seed": "1"}  # fmt: skip

pytestmark = pytest.mark.usefixtures("app_checkpoints")


def open_link(page: str | None = None, **params) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=120)
    for key, value in params.items():
        at.query_params[key] = value
    at.run()
    if page:
        at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def test_table3_puts_the_numbers_first_and_the_sentence_last():
    """Defect: on a phone (390x844) Table 3 showed no number without scrolling sideways: the
    sentence came first and each number column after it."""
    at = open_link("app_pages/table3.py", **LINK)
    at.multiselect[0].set_value(["cola-hsto", "cola-trans"]).run()
    at.button[0].click().run()
    assert not at.exception, at.exception
    for frame in at.dataframe:
        columns = list(frame.value.columns)
        assert columns[-2:] == ["gold", "sentence"], columns
        assert columns[:4] == ["cola-hsto: p(gold) mean ± var", "cola-hsto: correct/T",
                               "cola-trans: p(gold) mean ± var", "cola-trans: correct/T"]
        assert frame.value.iloc[0, 0].startswith("0.")


def column_config(frame) -> dict:
    """The ``column_config`` an ``st.dataframe`` was drawn with, by column name."""
    return json.loads(frame.proto.columns)


def test_results_gives_the_checkpoint_names_their_width_and_pins_them():
    """Defect: the Results table cut the names ("cola-minilm-mcdro"): the grid sized the column
    from its first rows."""
    from ui.logic.tables import CHAR_PX

    at = open_link("app_pages/results.py", ckpt="cola-hsto")
    table = at.dataframe[0]
    name = column_config(table)["checkpoint"]
    assert name["pinned"] is True
    longest = max(len(n) for n in table.value["checkpoint"])
    assert name["width"] >= CHAR_PX * longest + 16, (name, longest)
    assert list(table.value.columns)[0] == "checkpoint"


def test_error_analysis_headers_fit_and_the_numbers_come_before_the_text():
    """Defect: at 1400 px the "mean p(gold)" header was cut (the column sat past the text)."""
    from ui.logic.tables import CHAR_PX

    at = open_link("app_pages/errors.py", **LINK)
    at.number_input(key="err_n").set_value(5)
    at.button(key="err_go").click().run()
    assert not at.exception, at.exception
    table = at.dataframe[0]
    columns = list(table.value.columns)
    assert columns.index("p_gold") < columns.index("text") and columns.index("p_gold") <= 2
    for column, config in column_config(table).items():
        label = config.get("label") or column
        if column not in ("_index", "open", "text"):
            assert config["width"] >= CHAR_PX * len(label) + 16, (column, config)
    assert column_config(table)["p_gold"]["label"] == "p(gold)"


def test_results_preselects_the_sidebars_checkpoint_and_follows_it():
    """Defect: Results ignored the sidebar's checkpoint (it preselected two paper families)."""
    at = open_link("app_pages/results.py", ckpt="cola-probtrans")
    assert at.multiselect(key="res_ckpts").value[0] == "cola-probtrans"
    at.sidebar.selectbox[0].set_value("cola-bam").run()
    at.switch_page("app_pages/results.py").run()
    assert not at.exception, at.exception
    assert at.multiselect(key="res_ckpts").value[0] == "cola-bam"
    at.multiselect(key="res_ckpts").set_value(["cola-trans"]).run()  # a hand-made choice stays
    assert at.multiselect(key="res_ckpts").value == ["cola-trans"]


def array(value) -> np.ndarray:
    """A plotly array of a chart's spec (plotly ships them base64-encoded, with a shape)."""
    if isinstance(value, dict):
        flat = np.frombuffer(base64.b64decode(value["bdata"]), dtype=value["dtype"])
        shape = value.get("shape")
        return flat.reshape([int(n) for n in str(shape).split(",")]) if shape else flat
    return np.asarray(value, dtype=float)


def attention_spec(at: AppTest) -> dict:
    return chart_titled(at, "Attention, layer")


def test_a_flat_attention_map_gets_a_colour_range_of_its_own_by_default():
    """Defect: MiniLM maps (trained tau2 5.657, weights about 0.1) were almost white unless
    "Auto-scale the colours" was switched on: the scale was fixed to [0, 1]."""
    at = open_link(**LINK)  # a tiny untrained model: flat maps, every weight well below 1
    spec = attention_spec(at)
    top = spec["layout"]["coloraxis"]["cmax"]
    shown = max(array(trace["z"]).max() for trace in spec["data"][:2])  # sample and mean
    assert top == pytest.approx(shown, abs=1e-3) and top < 0.9, top
    at.toggle(key="att_auto").set_value(False).run()  # the fixed scale is still one click away
    assert attention_spec(at)["layout"]["coloraxis"]["cmax"] == 1.0


def test_the_centroid_panel_says_what_p_is():
    """Defect: the centroid panel's "sample 0: P" label was never explained."""
    at = open_link(**LINK)
    names = [a["text"] for a in chart_titled(at, "Centroid assignments")["layout"]["annotations"]]
    assert names[:2] == ["P, sample 0", "across samples"]
    captions = " ".join(c.value for c in at.caption)
    assert "P of sample 0: the centroid assignment probabilities of each key" in captions


@pytest.mark.parametrize(("ckpt", "T", "panel"), [("cola-trans", "5", "every sample"),
                                                  ("cola-hsto", "1", "sample 0")])
def test_identical_samples_draw_no_blank_std_map_and_say_why(ckpt, T, panel):
    """Defect: a deterministic checkpoint's std map was a blank square, unexplained."""
    at = open_link(**{**LINK, "ckpt": ckpt, "T": T})
    spec = attention_spec(at)
    facets = [a["text"] for a in spec["layout"]["annotations"]]
    assert facets == [panel] and len(spec["data"]) == 1, facets
    captions = " ".join(c.value for c in at.caption)
    assert "the standard deviation is 0 everywhere: no std map is drawn" in captions
    stochastic = attention_spec(open_link(**LINK))  # samples that differ keep all three maps
    assert [a["text"] for a in stochastic["layout"]["annotations"]] == [
        "sample 0", "mean of 5", "std of 5"]
