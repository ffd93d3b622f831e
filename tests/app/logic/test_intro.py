"""The landing's sentence (ui.logic.intro): what each shipped model is, in one sentence."""

from __future__ import annotations

import pytest

from uqlab.paths import SHIPPED_CHECKPOINT_DIR


@pytest.mark.parametrize(
    "name",
    ["cola-hsto", "cola-minilm-hsto", "cola-minilm-trans", "cola-ensemble", "cola-mcdropout"],
)
def test_the_landing_sentence_says_what_each_model_is(name):
    from ui.logic.intro import what_you_see
    from uqcore.registry import list_checkpoints

    info = next(i for i in list_checkpoints(SHIPPED_CHECKPOINT_DIR) if i.name == name)
    said = what_you_see(info)
    assert said.count(".") == 1 and said.endswith(".")  # one sentence
    expected = {
        "cola-hsto": "in which every attention layer samples its weights (H-STO-TRANS)",
        "cola-minilm-hsto": "in which the last attention layer samples its weights",
        "cola-minilm-trans": "whose attention draws nothing at random",
        "cola-ensemble": "5 times over with other seeds (Deep ensemble)",
        "cola-mcdropout": "with dropout kept on at inference (MC dropout)",
    }[name]
    assert expected in said, said
