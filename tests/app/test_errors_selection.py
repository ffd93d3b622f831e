"""AppTest of Error analysis opened on a selection a figure made (issue 49, item 1): exactly
the rows the library puts in that reliability bin, risk-coverage point or slice."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from ui.logic import keys as K
from uqcore.checkpoint import load_checkpoint
from uqcore.settings import SamplingSettings
from uqcore.stats import reliability_diagram, risk_coverage
from uqlab.workbench import dataset, slices
from uqlab.workbench.compute import many_probs

APP = str(Path(__file__).resolve().parents[2] / "app.py")
pytestmark = pytest.mark.usefixtures("app_checkpoints")
PER, T, SEED = 20, 5, 2


def _linked(sel: str) -> AppTest:
    """A fresh visit to Error analysis from a link that carries ``sel``."""
    at = AppTest.from_file(APP, default_timeout=300)
    for key, value in {"ckpt": "cola-hsto", "seed": str(SEED), "sel": sel}.items():
        at.query_params[key] = value
    at.switch_page("app_pages/errors.py")
    at.run()
    assert not at.exception, at.exception
    return at


@pytest.fixture(scope="module")
def frame(ckdir):  # noqa: F811 (the fixture)
    """The frame Error analysis computes for this link, computed here through the library."""
    ck = load_checkpoint(Path(ckdir) / "cola-hsto")
    rows = dataset.pick("cola", PER, SEED)
    sampler = lambda texts: many_probs(ck, tuple(texts), T, SEED, SamplingSettings())  # noqa: E731
    return dataset.frame(rows, sampler)[0]


def _shown(at: AppTest) -> set[str]:
    (table,) = [d.value for d in at.dataframe if "open" in d.value.columns]
    return set(table["text"])


def test_a_reliability_bin_opens_exactly_the_librarys_rows(frame):
    part = dataset.in_domain(frame)
    p = dataset.mean_probs(part)
    rd = reliability_diagram(p, part["gold"].to_numpy())
    b = int(np.argmax(rd.count))  # the fullest bin
    at = _linked(f"bin|{b}|T{T}|n{PER}")
    conf = p.max(1)
    inside = part[np.minimum((conf * 15).astype(int), 14) == b]
    assert len(inside) == rd.count[b]
    wrong = int((inside["pred"] != inside["gold"]).sum())
    said = [i.value for i in at.info if i.value.startswith("Selected: confidence in [")]
    assert said and said[0].endswith(f": {rd.count[b]} texts, {wrong} wrong.")
    assert _shown(at) == set(inside["text"])
    assert (at.number_input(key=K.ERR_T).value, at.number_input(key=K.ERR_N).value) == (T, PER)


def test_a_risk_coverage_point_opens_the_most_confident_rows(frame):
    part = dataset.in_domain(frame)
    rc = risk_coverage(dataset.mean_probs(part), part["gold"].to_numpy())
    k = 7
    at = _linked(f"top|{k}|T{T}|n{PER}")
    shown = _shown(at)
    assert len(shown) == k
    picked = part[part["text"].isin(shown)]
    assert (picked["pred"] != picked["gold"]).sum() == round(rc.risk[k - 1] * k)
    assert any(i.value.startswith(f"Selected: the {k} most confident") for i in at.info)


def test_a_slice_opens_its_rows_and_the_button_shows_every_row_again(frame):
    groups = slices.groups(frame, "gold label", ("unacceptable", "acceptable"))
    at = _linked(f"slice|gold label|acceptable|T{T}|n{PER}")
    assert _shown(at) == set(frame[groups == "acceptable"]["text"])
    at.button(key=K.ERR_SEL_CLEAR).click().run()
    assert not at.exception, at.exception
    assert _shown(at) == set(frame["text"])
    assert "sel" not in at.query_params


@pytest.mark.parametrize(
    ("sel", "why"),
    [
        ("slice|word or pattern|(a+)+$|T5|n20", "A link selects a slice by"),
        ("bin|99|T5|n20", "out of range"),
        ("<script>|1|T5|n20", "not one this app makes"),
        ("top|3|T5", "incomplete"),
    ],
)
def test_a_selection_the_app_never_makes_is_said_and_ignored(sel, why):
    at = _linked(sel)
    said = " ".join(str(w.value) for w in [*at.warning, *at.info, *at.caption, *at.markdown])
    assert why in said, said
    assert not any(i.value.startswith("Selected:") for i in at.info)


def test_a_histogram_bar_opens_the_rows_of_its_domain_in_its_range(frame):
    ood = frame[frame["domain"] != dataset.in_domain(frame)["domain"].iloc[0]]
    domain = str(ood["domain"].iloc[0])
    lo, hi = 0.0, float(ood["entropy"].median())
    at = _linked(f"range|entropy|{lo!r}|{hi!r}|{domain}|T{T}|n{PER}")
    want = ood[(ood["entropy"] >= lo) & (ood["entropy"] < hi)]
    assert _shown(at) == set(want["text"]) and len(want) > 0
    assert any(
        i.value.startswith("Selected: predictive entropy in [0, ") and domain in i.value
        for i in at.info
    )


def test_a_roc_point_opens_every_text_its_threshold_flags(frame):
    cut = float(frame["mi"].quantile(0.8))
    at = _linked(f"flag|mutual_information:{cut!r}|T{T}|n{PER}")
    assert _shown(at) == set(frame[frame["mi"] >= cut]["text"])
    assert any(i.value.startswith("Selected: flagged by mutual information ≥ ") for i in at.info)
