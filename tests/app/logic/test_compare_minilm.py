"""Compare across tokenizations (ui.logic.compare) on the shipped MiniLM checkpoints."""

from __future__ import annotations

import pytest

from tests.helpers import use_shipped
from ui.logic.compare import mean_attention
from uqcore.checkpoint import load_checkpoint
from uqcore.settings import SamplingSettings
from uqlab.catalog.paths import SHIPPED_CHECKPOINT_DIR
from uqlab.workbench.compute import explore

HSTO, BAM = "cola-minilm-hsto", "cola-minilm-bam"


TEXT = "The playwright's script was unplayable 🙂."


@pytest.fixture(autouse=True)
def shipped(monkeypatch, minilm_base):
    use_shipped(monkeypatch, HSTO)


def test_compare_keeps_each_tokenization_on_its_own_axes():
    results = {
        name: explore(
            load_checkpoint(SHIPPED_CHECKPOINT_DIR / name, shared_weights=True),
            TEXT,
            3,
            0,
            SamplingSettings(),
        ).for_label(1)
        for name in ("cola-hsto", HSTO, BAM)
    }
    groups = mean_attention(results, 0, 0, 64)
    assert [sorted(panels) for _, panels in groups] == [["cola-hsto"], sorted([HSTO, BAM])]
    for tokens, panels in groups:
        assert all(m.shape == (len(tokens), len(tokens)) for m in panels.values())
    assert "##play" in groups[1][0] and "##play" not in groups[0][0]
