"""The explorer's views (ui.explore_views) on tiny checkpoints: the attention map's colour range,
the centroid panel's label, no blank std map (issue 24, point 5), exports that record their
settings."""

from __future__ import annotations

import base64
import io
import json

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import chart_titled, open_link

LINK = {
    "ckpt": "cola-hsto",
    "text": "John is tall on several occasions.",
    "label": "0",
    "T": "5",
    "seed": "1",
}

pytestmark = pytest.mark.usefixtures("app_checkpoints")


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


@pytest.mark.parametrize(
    ("ckpt", "T", "panel"), [("cola-trans", "5", "every sample"), ("cola-hsto", "1", "sample 0")]
)
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
        "sample 0",
        "mean of 5",
        "std of 5",
    ]


def test_exports_record_their_settings_in_the_name_and_inside():
    """Defect: two CSVs made at different temperatures got the same name and held only
    ``sample, p_*``."""
    from ui.explore_views import arrays_npz, export_stem, samples_csv, settings_record
    from ui.logic.compute import explore
    from uqcore.registry import load
    from uqcore.settings import SamplingSettings
    from uqlab.paths import checkpoint_dir

    ck = load("cola-hsto", str(checkpoint_dir()))  # the tiny ones (pytestmark)
    stems = []
    for tau2 in (1.0, 40.0):
        res = explore(ck, LINK["text"], 5, 1, SamplingSettings(tau2=tau2))
        record = settings_record(res, "cola-hsto", "hsto")
        stems.append(export_stem(record))
    assert stems[1] == "cola-hsto-T5-seed1-tau1_1-tau2_40-noise_scale_1-hard_False"
    assert stems[0] != stems[1]
    text = samples_csv(res, ("unacceptable", "acceptable"), record)
    rows = [r for r in text.splitlines() if not r.startswith("# ")]  # past the settings lines
    assert text.startswith("# checkpoint: cola-hsto\n# T: 5\n# seed: 1\n")
    assert rows[0].startswith("sample,p_unacceptable,p_acceptable,checkpoint,T,seed,tau1,tau2")
    assert ",40.0," in rows[1] and LINK["text"] in rows[1]
    npz = np.load(io.BytesIO(arrays_npz(res, record)))
    assert json.loads(str(npz["settings"]))["tau2"] == 40.0
