"""AppTest of the explore page on tiny checkpoints (``tests/app_fixtures.py``)."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.app_fixtures import app_checkpoints, ckdir  # noqa: F401 (fixtures)
from tests.helpers import chart_titled, chart_titles, open_link
from ui.logic import keys as K

APP = str(Path(__file__).resolve().parents[2] / "app.py")
LINK = {
    "ckpt": "cola-hsto",
    "text": "John is tall on several occasions.",
    "label": "0",
    "T": "50",
    "seed": "1",
}


pytestmark = pytest.mark.usefixtures("app_checkpoints")


def metrics(at: AppTest) -> dict[str, str]:
    return {m.label: m.value for m in at.metric}


def histogram_x(at: AppTest) -> np.ndarray:
    """All samples of the prediction histogram (plotly ships arrays base64-encoded)."""
    spec = json.loads(at.get("plotly_chart")[0].proto.spec)
    values = []
    for trace in spec["data"]:
        x = trace.get("x", [])
        if isinstance(x, dict):
            x = np.frombuffer(base64.b64decode(x["bdata"]), dtype=x["dtype"])
        values.extend(float(v) for v in x)
    return np.sort(np.array(values))


def sidebar_input(at: AppTest, label: str):
    return next(w for w in at.sidebar.number_input if w.label == label)


def test_a_shared_link_shows_histogram_statistics_attention_and_centroids():
    at = open_link(**LINK)
    m = metrics(at)
    assert m["Correct / T"].endswith("/ 50")
    assert "p(unacceptable) mean ± variance" in m  # gold label 0 = unacceptable
    titles = chart_titles(at)
    assert any(t.startswith("p(unacceptable) per sample") for t in titles)
    assert any(t.startswith("Attention, layer") for t in titles)
    assert "Centroid assignments of the keys" in titles
    assert len(histogram_x(at)) == 50
    again = open_link(**LINK)  # a reload: same numbers
    assert metrics(again) == m
    assert np.array_equal(histogram_x(again), histogram_x(at))


def test_the_url_carries_the_whole_view():
    """A link without T gets the default written in; sidebar edits are checked in the browser
    tests (AppTest does not re-render an entry script's sidebar under st.navigation)."""
    at = open_link(ckpt="cola-hsto", text="nora sent the book to london")
    assert at.query_params["T"] == ["50"] or str(at.query_params["T"]) in ("50", "['50']")
    assert "london" in str(at.query_params["text"])


def test_settings_change_the_numbers():
    base = histogram_x(open_link(**LINK))
    assert not np.array_equal(histogram_x(open_link(**{**LINK, "seed": "2"})), base)
    hot = open_link(**{**LINK, "tau2": "100"})
    assert not np.array_equal(histogram_x(hot), base)
    tau2 = next(s for s in hot.sidebar.select_slider if s.label.startswith("tau2"))
    assert tau2.value == 100.0 and tau2.label.endswith("(trained 2)")


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"T": "abc"}, "not a number"),
        ({"T": "5000"}, "outside [1, 1000]"),
        ({"tau1": "-3"}, "outside"),
        ({"seed": "1e99"}, "not a number"),
        ({"ckpt": "nope"}, "not available"),
        ({"label": "x"}, "not a class number"),
    ],
)
def test_bad_query_parameters_show_a_message_and_the_page_works(params, message):
    at = open_link(**{**LINK, **params})
    assert any(message in w.value for w in at.warning), [w.value for w in at.warning]
    assert at.get("plotly_chart")


@pytest.mark.parametrize(
    ("text", "message"),
    [("", "empty"), ("   ", "empty"), ("zzzz qqqq", "vocabulary")],
)
def test_unusable_text_shows_an_error_not_a_traceback(text, message):
    at = open_link(**{**LINK, "text": text})
    assert any(message in e.value for e in at.error), [e.value for e in at.error]


@pytest.mark.parametrize(
    "text",
    [
        "John 😀 is tall 👍🏽 .",
        "جون طويل john is tall",
        "<b>john</b> is **tall** <script>x</script>",
        "john is tall " * 20_000,
    ],
)
def test_odd_and_huge_text_is_handled(text):
    at = open_link(**{**LINK, "text": text})
    assert at.get("plotly_chart")
    if len(text) > 20_000:
        assert any("first 20,000 are kept" in w.value for w in at.warning)
        assert any("only its first" in w.value for w in at.warning)


def test_submitting_a_typed_sentence_runs_it():
    at = open_link(**LINK)
    at.text_area[0].set_value("nora sent the book to london")
    at.radio[0].set_value("acceptable")
    at.get("form_submit_button")[0].click().run()
    assert not at.exception
    assert "p(acceptable) mean ± variance" in metrics(at)
    assert "london" in str(at.query_params["text"])


def test_bam_and_probtrans_show_their_views():
    at = open_link(**{**LINK, "ckpt": "cola-bam"})
    titles = chart_titles(at)
    assert any(t.startswith("Prior vs posterior attention") for t in titles)
    assert any(t.startswith("Mean KL(posterior ‖ prior) per token pair") for t in titles)
    at = open_link(**{**LINK, "ckpt": "cola-probtrans"})
    assert any(t.startswith("Attention before and after EM") for t in chart_titles(at))
    assert any(m.label.endswith("after EM") for m in at.metric)


def test_bam_view_has_one_legend_entry_for_its_sample_dots():
    """Defect: a legend entry per sample dot ("sample 0" on several dots)."""
    at = open_link(**{**LINK, "ckpt": "cola-bam"})
    traces = chart_titled(at, "Prior vs")["data"]
    legend = [t["name"] for t in traces if t.get("showlegend", True)]
    assert legend == ["prior π (keys only)", "posterior mean", "posterior samples 0-4"]


def test_a_first_visit_lands_on_an_introduction_with_three_stories():
    at = AppTest.from_file(APP, default_timeout=120)
    at.run()  # a bare link: no text
    assert not at.exception, at.exception
    # the tiny checkpoints have no stored samples: the first view samples nothing for stories,
    # it offers to find them on a small sample
    assert not [b for b in at.button if b.key and b.key.startswith("landing_story")]
    assert any("no stored samples" in c.value for c in at.caption)
    at.button(key="landing_find").click().run()
    assert not at.exception, at.exception
    stories = [b for b in at.button if b.key and b.key.startswith("landing_story")]
    assert len(stories) == 3
    assert not [b for b in at.button if b.key == "landing_find"]
    said = " ".join(m.value for m in at.markdown if "What you are looking at" in m.value)
    assert (
        "(the paper's word-level set-up), in which every attention layer samples its attention "
        "weights (H-STO-TRANS): each sample is one plausible reading of the text" in said
    )
    stories[1].click().run()  # the uncertain one
    assert not at.exception
    assert at.query_params["text"]  # the story's sentence is the view now
    kept = [b for b in at.button if b.key and b.key.startswith("landing_story")]
    assert len(kept) == 3  # the other stories stay one click away
    assert [b.proto.type for b in kept] == ["secondary", "primary", "secondary"]  # the open one
    at.button(key="landing_close").click().run()  # until the visitor hides them
    assert not [b for b in at.button if b.key and b.key.startswith("landing_story")]
    linked = open_link(**LINK)  # a shared link goes straight to its view
    assert not [b for b in linked.button if b.key and b.key.startswith("landing_story")]


def test_a_checkpoint_without_calibration_data_says_why_it_has_no_conformal_set():
    at = open_link(**LINK)  # the tiny checkpoints were never evaluated
    assert any("No conformal set" in c.value for c in at.caption)


def test_every_family_explores_without_error():
    for family in ("trans", "mcdropout", "ensemble", "sto", "bayesformer"):
        at = open_link(**{**LINK, "ckpt": f"cola-{family}"})
        assert metrics(at)["Correct / T"].endswith("/ 50"), family


def goto_table3(at: AppTest) -> AppTest:
    at.switch_page("app_pages/table3.py").run()
    assert not at.exception, at.exception
    return at


LIVE_MARKUP = ("](", "**", "<a", "\n#")  # what would render as a link, bold, HTML, a heading


def unescaped(text: str) -> list[str]:
    """The markup of LIVE_MARKUP left live in ``text`` (escaped characters are preceded by \\)."""
    raw = text.replace("\\[", "").replace("\\]", "").replace("\\(", "").replace("\\*", "")
    return [m for m in LIVE_MARKUP if m in raw]


@pytest.mark.parametrize(
    ("params", "said"),
    [
        ({"tau1": "nan"}, "tau1 'nan' in the link is not a number; using the checkpoint's trained"),
        ({"tau2": "inf"}, "tau2 'inf' in the link is not a number; using the checkpoint's trained"),
        ({"tau1": "abc"}, "tau1 'abc' in the link is not a number"),
        ({"label": "7"}, "Label 7 in the link is not a class of cola-hsto (0 to 1); ignored."),
    ],
)
def test_link_notes_say_what_is_used_instead(params, said):
    """Defects: notes said "using None"; label=7 was dropped silently (label=-1 had a note)."""
    at = open_link(**{**LINK, **params})
    notes = " ".join(w.value for w in at.warning)
    assert said in notes and "None" not in notes, notes


def test_a_long_text_stays_out_of_the_link_and_the_page_says_so():
    """Defect: the app wrote any typed text into the URL, so the link it offered for a long
    review was refused by the server before the app could run."""
    at = open_link(**LINK)
    review = "a long and winding review of a film " * 400  # 14,800 characters
    at.text_area[0].set_value(review)
    at.get("form_submit_button")[0].click().run()
    assert not at.exception
    assert "text" not in at.query_params and at.query_params["ckpt"] in ("cola-hsto", ["cola-hsto"])
    assert any("too long to travel in a link" in i.value for i in at.info)
    assert metrics(at)["Correct / T"].endswith("/ 50")  # computed on the whole text


def test_text_from_a_link_or_a_paste_is_shown_never_rendered_as_markup():
    """Defect: ``?ckpt=[Click here to sign in](https://example.com/login)`` showed a live link
    inside the app's own note; ``**bold**`` rendered bold; a pasted domain became a heading."""
    at = open_link(
        **{
            **LINK,
            "ckpt": "[Click here to sign in](https://example.com/login)",
            "label": "**bold**",
        }
    )
    notes = [w.value for w in at.warning]
    assert any("Click here to sign in" in n for n in notes) and any("bold" in n for n in notes)
    assert all(not unescaped(n) for n in notes), notes
    at = goto_table3(open_link(**{**LINK, "T": "3"}))
    at.radio(key="t3_source").set_value("Paste lines").run()
    at.text_area(key="t3_pasted").set_value("john is tall\t[x](https://e.com)\t# **Big**").run()
    assert all(not unescaped(w.value) for w in at.warning)
    at.button[0].click().run()
    assert not at.exception
    heads = [h.value for h in at.subheader]
    assert any("Big" in h for h in heads) and all(not unescaped("\n" + h) for h in heads), heads


def in_page(at: AppTest) -> dict[str, object]:
    """The in-page knobs (``ui.sidebar.knob_row``): the sidebar key each copies -> its value."""
    widgets = (*at.main.number_input, *at.main.select_slider, *at.main.slider, *at.main.radio)
    return {
        w.key.removeprefix(K.MAIN_KNOB).split("=")[0]: w.value
        for w in widgets
        if (w.key or "").startswith(K.MAIN_KNOB)
    }


def test_the_in_page_knobs_move_the_sidebar_the_link_and_the_numbers_and_follow_them():
    """A phone's sidebar is closed: T and the live knobs sit in the page too, as copies. A move
    there moves the sidebar's control, the link and the histogram; a move in the sidebar (or a
    link's value) shows in the copy."""
    at = open_link(**{**LINK, "tau1": "10"})
    assert in_page(at) == {"T": 50, "tau1": 10.0, "tau2": 2.0, "noise_scale": 1.0}
    base = histogram_x(at)
    copy = next(w for w in at.main.select_slider if w.key.startswith(f"{K.MAIN_KNOB}tau2="))
    assert copy.label == "tau2 (trained 2)"
    copy.set_value(100.0).run()
    assert not at.exception, at.exception
    assert next(s for s in at.sidebar.select_slider if s.label.startswith("tau2")).value == 100.0
    assert at.query_params["tau2"] in ("100.0", ["100.0"])
    assert not np.array_equal(histogram_x(at), base)
    assert in_page(at)["tau2"] == 100.0
    sidebar_input(at, "Samples T").set_value(20).run()
    assert in_page(at)["T"] == 20 and len(histogram_x(at)) == 20
    again = next(w for w in at.main.number_input if w.key.startswith(K.MAIN_KNOB))
    again.set_value(30).run()
    assert sidebar_input(at, "Samples T").value == 30 and len(histogram_x(at)) == 30


def test_the_in_page_knobs_are_the_live_ones():
    """A knob the family does not read (a deterministic transformer's temperatures and noise)
    stays in the sidebar, disabled with its reason; the page offers T and the live ones only."""
    assert set(in_page(open_link(**{**LINK, "ckpt": "cola-trans"}))) == {"T"}
    for family in ("hsto", "bam", "probtrans", "bayesformer"):
        at = open_link(**{**LINK, "ckpt": f"cola-{family}"})
        side = (*at.sidebar.select_slider, *at.sidebar.slider, *at.sidebar.radio)
        live = {w.key for w in side if w.key in K.KNOBS and not w.disabled}
        assert set(in_page(at)) == {"T", *live} and live, family
