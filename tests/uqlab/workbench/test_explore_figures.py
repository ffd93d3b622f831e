"""The explorer's figures and captions without Streamlit (uqlab.workbench.explore_figures): the
tokens on the axes, the attention panels and how their caption reads the spread."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from uqlab.workbench.explore_figures import attention_caption, attention_spec, tokens_for_axes
from uqlab.workbench.figures import STD_MAX


def _result(maps: np.ndarray) -> SimpleNamespace:
    """What attention_spec reads of an ExploreResult: layer 0's maps ``[Tc, H, L, L]``."""
    return SimpleNamespace(
        captured=maps.shape[0], maps={0: SimpleNamespace(attention=maps)}, causal=False
    )


def test_unknown_tokens_are_marked_on_the_axes():
    res = SimpleNamespace(tokens=["[CLS]", "a", "zork"], unknown=[False, False, True])
    assert tokens_for_axes(res) == ["[CLS]", "a", "zork⟨unk⟩"]


def test_identical_samples_give_one_panel_and_differing_ones_three():
    tokens = ["[CLS]", "a", "b"]
    flat = np.full((4, 1, 3, 3), 1 / 3, dtype=np.float16)
    specs, same = attention_spec(_result(flat), tokens, 0, 0, 0, 0, 3, auto=False)
    assert same and len(specs) == 1
    rng = np.random.default_rng(0)
    varied = rng.dirichlet(np.ones(3), size=(4, 1, 3)).astype(np.float16)  # [4, 1, 3, 3]
    specs, same = attention_spec(_result(varied), tokens, 0, 0, 2, 0, 3, auto=False)
    assert not same and len(specs) == 3
    assert "Attention, layer 0, head 0" in str(specs[0]["layout"]["title"])
    cropped, _ = attention_spec(_result(varied), tokens, 0, 0, 2, 1, 3, auto=False)
    assert "tokens 1-2 of 3" in str(cropped[0]["layout"]["title"])


def test_the_caption_says_how_the_spread_is_scaled():
    std = {"layout": {"coloraxis2": {"cmax": 0.123}}}
    assert "no std map is drawn" in attention_caption(std, True, False, 5, 5)
    assert "The one sample" in attention_caption(std, True, False, 1, 1)
    assert "its own largest value (0.123)" in attention_caption(std, False, True, 5, 5)
    fixed = attention_caption(std, False, False, 5, 20)
    assert f"from 0 to {STD_MAX:g}" in fixed
    assert fixed.endswith("Maps are kept for the first 5 samples.")
    assert fixed.startswith("Row = the token that attends (query)")
