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
from tests.helpers import chart_titled, chart_titles, open_link

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


def attention_panels(at: AppTest) -> list[dict]:
    """The attention view's figures, one per panel: the one titled "Attention, layer ..." and
    the untitled panels drawn right after it (the mean and the std)."""
    specs = [json.loads(c.proto.spec) for c in at.get("plotly_chart")]
    titles = chart_titles(at)
    first = next(i for i, t in enumerate(titles) if t.startswith("Attention, layer"))
    out = [specs[first]]
    for spec, title in zip(specs[first + 1 :], titles[first + 1 :], strict=True):
        names = [a.get("text", "") for a in spec["layout"].get("annotations", [])]
        if title or not names or not names[0].startswith(("mean of", "std of")):
            break
        out.append(spec)
    return out


def attention_spec(at: AppTest) -> dict:
    """The attention panels as one spec: every panel's trace and name, the first's layout and
    the std panel's colour axis."""
    panels = attention_panels(at)
    layout = dict(panels[0]["layout"])
    layout["annotations"] = [p["layout"]["annotations"][0] for p in panels]
    for p in panels:
        if "coloraxis2" in p["layout"]:
            layout["coloraxis2"] = p["layout"]["coloraxis2"]
    return {"data": [t for p in panels for t in p["data"]], "layout": layout}


def test_the_attention_maps_open_on_the_fixed_scale_and_auto_scale_is_one_click_away():
    """Issue 45: "Auto-scale the colours" was on by default, so a near-uniform map (tau2 = 50)
    was a solid dark square, its darkest colour the largest of nearly equal weights. The
    teaching view opens on the fixed [0, 1] scale (and the spread on [0, STD_MAX]); the
    scale of the weights shown is one click away."""
    at = open_link(**LINK)  # a tiny untrained model: flat maps, every weight well below 1
    assert at.toggle(key="att_auto").value is False
    spec = attention_spec(at)
    assert spec["layout"]["coloraxis"]["cmax"] == 1.0
    assert spec["layout"]["coloraxis2"]["cmax"] == 0.5
    at.toggle(key="att_auto").set_value(True).run()
    spec = attention_spec(at)
    top = spec["layout"]["coloraxis"]["cmax"]
    shown = max(array(trace["z"]).max() for trace in spec["data"][:2])  # sample and mean
    assert top == pytest.approx(shown, abs=1e-3) and top < 0.9, top
    sample, mean = attention_panels(at)[:2]  # two figures, one scale
    assert sample["layout"]["coloraxis"]["cmax"] == mean["layout"]["coloraxis"]["cmax"] == top


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
    from ui.logic.exports import arrays_npz, export_stem, samples_csv, settings_record
    from uqcore.registry import load
    from uqcore.settings import SamplingSettings
    from uqlab.catalog.paths import checkpoint_dir
    from uqlab.workbench.compute import explore

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


# --- issue 34: a class can see what each knob does ----------------------------------------------
def _std_panel(spec: dict) -> tuple[np.ndarray, float]:
    """The std panel's values and the top of its colour scale."""
    trace = next(t for t in spec["data"] if t.get("coloraxis") == "coloraxis2")
    return array(trace["z"]), spec["layout"]["coloraxis2"]["cmax"]


def test_the_std_panel_keeps_one_scale_so_less_disagreement_looks_paler():
    """Defect: the std map was scaled to its own largest value, so a spread of 0.004
    (tau2 = 50) looked as dark as one of 0.3 (tau2 = 0.5). Now its colours run from 0 to 0.5
    whatever the knobs: its mean colour intensity (mean z / cmax) follows the mean spread."""
    from uqcore.registry import load
    from uqcore.settings import SamplingSettings
    from uqlab.catalog.paths import checkpoint_dir
    from uqlab.workbench.compute import explore

    ck = load("cola-sto", str(checkpoint_dir()))
    intensity, spread = {}, {}
    for tau2 in ("0.5", "50"):
        at = open_link(**{**LINK, "ckpt": "cola-sto", "T": "20", "tau2": tau2})
        z, top = _std_panel(attention_spec(at))
        assert top == 0.5  # the same fixed scale at every tau2
        intensity[tau2] = float(z.mean() / top)
        res = explore(ck, LINK["text"], 20, 1, SamplingSettings(tau2=float(tau2)))
        maps = res.maps[1].attention[:, 0].astype(np.float32)  # last layer, head 0: [T, L, L]
        np.testing.assert_allclose(z, maps.std(0), atol=1e-6)  # its data: the std values
        spread[tau2] = float(maps.std(0).mean())
    assert spread["0.5"] > 3 * spread["50"]  # tau2 = 50 flattens the attention
    ratio = intensity["0.5"] / intensity["50"]
    assert ratio == pytest.approx(spread["0.5"] / spread["50"], rel=1e-3), (ratio, spread)
    captions = " ".join(c.value for c in at.caption)
    assert "fixed scale from 0 to 0.5" in captions
    # auto-scale is one click away (and part of the figure's cache key)
    at.toggle(key="att_auto_spread").set_value(True).run()
    z, top = _std_panel(attention_spec(at))
    assert top == pytest.approx(float(z.max()), rel=1e-6) and top < 0.5
    assert "scaled to its own largest value" in " ".join(c.value for c in at.caption)


def _captions(at: AppTest) -> str:
    return " ".join(c.value for c in at.caption)


def test_a_deterministic_checkpoint_draws_no_sample_slider_and_says_its_samples_are_equal():
    """Defect: a "Sample" slider over identical samples, and a histogram caption about "fresh
    attention noise" for a model that draws none."""
    at = open_link(**{**LINK, "ckpt": "cola-trans"})
    assert "Sample" not in [s.label for s in at.slider]
    assert "att_auto_spread" not in [t.key for t in at.toggle]  # no std map: no spread scale
    captions = _captions(at)
    assert "draws nothing at random" in captions and "all T samples are identical" in captions
    assert "fresh attention noise" not in captions
    stochastic = open_link(**LINK)  # cola-hsto: its samples differ
    assert "Sample" in [s.label for s in stochastic.slider]
    assert "fresh Gumbel noise" in _captions(stochastic)


def test_settings_that_draw_no_noise_draw_no_sample_slider_and_say_why():
    at = open_link(**{**LINK, "ckpt": "cola-sto", "noise_scale": "0"})
    assert "Sample" not in [s.label for s in at.slider]
    assert "With these settings every sample is the same" in _captions(at)


@pytest.mark.parametrize(
    ("family", "said"),
    [
        ("mcdropout", "a fresh dropout mask"),
        ("ensemble", "one member of the ensemble"),
        ("bayesformer", "fresh dropout masks on the inputs"),
        ("probtrans", "all T samples are identical"),
    ],
)
def test_the_histogram_caption_says_what_one_sample_is(family, said):
    assert said in _captions(open_link(**{**LINK, "ckpt": f"cola-{family}"}))


@pytest.fixture(scope="module", autouse=True)
def flat_bam(ckdir):  # noqa: F811 (the fixture)
    """``cola-flatbam``: a tiny BAM whose prior is fixed (uniform), beside the tiny ``cola-bam``
    whose contextual prior (random weights) is not."""
    import torch

    from tests.helpers import tiny_config
    from ui.logic.catalog import presets
    from uqcore.build import build_model
    from uqcore.checkpoint import save_checkpoint
    from uqcore.text.vocab import Vocab

    texts = [p.text for p in presets("cola")] + ["a great movie", "the film was dull"]
    vocab = Vocab.build(texts, max_size=500)
    cfg = tiny_config("bam", prior="fixed").replace(vocab_size=len(vocab), max_len=64)
    torch.manual_seed(0)
    training = {
        "task": "cola",
        "family": "bam",
        "label_names": ["unacceptable", "acceptable"],
        "splits": {"train": 10, "dev": 2, "test": 2, "ood": 2},
    }
    save_checkpoint(ckdir / "cola-flatbam", build_model(cfg), cfg, vocab, training=training)


def _infos(at: AppTest) -> list[str]:
    return [e.body for e in at.info]


def test_a_uniform_prior_gets_a_note_and_a_learned_one_does_not(monkeypatch):
    """Defect: cola-bam's prior is flat (about 1/7 on each key) and its KL bar the same for
    every head, unexplained."""
    import ui.map_views as V

    flat = open_link(**{**LINK, "ckpt": "cola-flatbam"})
    notes = [n for n in _infos(flat) if "prior is (nearly) uniform" in n]
    assert len(notes) == 1 and "the KL bar only measures how peaked the posterior is" in notes[0]
    assert "open [" not in notes[0]  # no checkpoint with a learned prior in this folder
    learned = open_link(**{**LINK, "ckpt": "cola-bam"})
    assert not [n for n in _infos(learned) if "prior is (nearly) uniform" in n]
    monkeypatch.setattr(V, "LEARNED_PRIOR", "cola-bam")  # available: the note links to it
    note = next(n for n in _infos(open_link(**{**LINK, "ckpt": "cola-flatbam"})) if "uniform" in n)
    assert "For a prior that is learned, open [cola-bam](/?ckpt=cola-bam&" in note


def test_the_glossary_sits_by_the_metrics_and_lists_every_term():
    from ui.logic.glossary import GLOSSARY

    at = open_link(**LINK)
    shown = "\n".join(m.value for m in at.markdown)
    for term, text in GLOSSARY.items():
        assert f"**{term}**: {text}" in shown, term
