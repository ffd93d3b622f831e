"""The landing's sentence (ui.logic.intro): what each shipped model is, in one sentence."""

from __future__ import annotations

import pytest

from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR


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
        "cola-hsto": "in which every attention layer samples its attention weights (H-STO-TRANS)",
        "cola-minilm-hsto": "in which the last attention layer samples its attention weights",
        "cola-minilm-trans": "whose attention draws nothing at random",
        "cola-ensemble": "3 times over with other seeds (Deep ensemble)",
        "cola-mcdropout": "with dropout kept on at inference (MC dropout)",
    }[name]
    assert expected in said, said


@pytest.mark.parametrize(
    ("name", "said", "unsaid"),
    [
        (
            "cr-smollm2-words-sto",
            "A pretrained SmolLM2 instruction-tuned decoder, untrained here, asked zero-shot",
            "fine-tuned",
        ),
        ("cr-smollm2-hsto", "A pretrained SmolLM2 decoder fine-tuned on", "encoder"),
        ("cola-minilm-hsto", "A pretrained MiniLM encoder fine-tuned on", "decoder"),
    ],
)
def test_a_pretrained_model_is_said_from_its_own_config(name, said, unsaid):
    """Issue 45: every SmolLM2 checkpoint was "a pretrained SmolLM2 encoder fine-tuned...", the
    zero-shot label-word one too (a decoder, and nothing was trained). The sentence now reads
    the backbone's kind and whether the checkpoint holds a prompt instead of a training."""
    from ui.logic.intro import what_you_see
    from uqcore.registry import list_checkpoints

    info = next(i for i in list_checkpoints(SHIPPED_CHECKPOINT_DIR) if i.name == name)
    text = what_you_see(info)
    assert text.startswith(said) and unsaid not in text, text
    assert text.count(".") == 1 and text.endswith(".")
    if "words" in name:
        assert "'negative' or 'positive'" in text
