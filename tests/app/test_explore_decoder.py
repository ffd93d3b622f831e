"""The explorer on a shipped SmolLM2 (decoder) checkpoint: the text read between the base's own
opening and closing tokens, causal attention maps whose later keys are left empty (never drawn
as zero weights) in the sample, mean and spread panels, H-STO's centroids and the model card."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import numpy as np
import pytest
from streamlit.testing.v1 import AppTest

from tests.helpers import chart_titles
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR

APP = str(Path(__file__).resolve().parents[2] / "app.py")
HSTO = "cola-smollm2-hsto"
TEXT = "Bill and Mary washed himself."


@pytest.fixture(autouse=True)
def shipped(monkeypatch):
    from uqcore.exceptions import ConfigError
    from uqlab.bases import get_base

    if not (SHIPPED_CHECKPOINT_DIR / HSTO / "config.json").is_file():
        pytest.skip("the shipped SmolLM2 checkpoints are not here")
    try:
        get_base("smollm2").path()
    except ConfigError as exc:
        pytest.skip(str(exc))
    monkeypatch.setenv("UQ_CHECKPOINT_DIR", str(SHIPPED_CHECKPOINT_DIR))


def _z(trace: dict) -> np.ndarray:
    """A heat map's z as floats (plotly writes numpy arrays as base64 typed arrays)."""
    z = trace["z"]
    if isinstance(z, dict):  # {"dtype": "f4", "bdata": ..., "shape": "7, 7"}
        flat = np.frombuffer(base64.b64decode(z["bdata"]), dtype=np.dtype(z["dtype"]))
        shape = [int(n) for n in str(z.get("shape", len(flat))).split(",")]
        return flat.reshape(shape).astype(float)
    return np.array([[np.nan if v is None else v for v in row] for row in z], float)


def test_a_decoders_attention_leaves_the_later_keys_empty():
    at = AppTest.from_file(APP, default_timeout=240)
    for key, value in {"ckpt": HSTO, "text": TEXT, "T": "10", "seed": "1"}.items():
        at.query_params[key] = value
    at.run()
    assert not at.exception, at.exception
    shown = chart_titles(at)
    assert any(t.startswith("p(acceptable) per sample") for t in shown)
    assert "Centroid assignments of the keys" in shown
    panels = [
        json.loads(c.proto.spec)
        for c in at.get("plotly_chart")
        if json.loads(c.proto.spec)["data"][0].get("hovertemplate", "").startswith("query")
    ]
    assert len(panels) == 3  # the sample, the mean, the spread (noise in the last layer)
    for spec in panels:
        trace = spec["data"][0]
        z = _z(trace)
        later = np.triu(np.ones_like(z, dtype=bool), 1)
        assert np.isnan(z[later]).all() and not np.isnan(z[~later]).any()
        labels = [y.replace("&lt;", "<") for y in trace["y"]]  # inert: "<" written as an entity
        assert labels[0].endswith("<|im_start|>") and labels[-1].endswith("<|im_end|>")
    last = _z(panels[0]["data"][0])[-1]  # the closing token's row: every key, summing to 1
    assert np.nansum(last) == pytest.approx(1.0, abs=2e-3)
