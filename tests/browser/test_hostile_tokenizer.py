"""Browser: a Hugging Face zip whose tokenizer.json splits with a backtracking regex (issue 31,
item 4) is refused on "Your checkpoint" with a one-line message within seconds; the page never
spins without a message (before the fix it was accepted and the explorer spun forever)."""

from __future__ import annotations

import json
import time

import pytest

from tests.browser.test_browser import IDLE, _zip, pick_hf_zip

pytestmark = pytest.mark.browser
BACKTRACKS = {
    "type": "Split",
    "pattern": {"Regex": r"(\w+\s?)+$"},
    "behavior": "Isolated",
    "invert": False,
}


def test_a_backtracking_tokenizer_is_refused_with_a_message(tab, server, shots, tmp_path):
    pytest.importorskip("transformers")
    from tests.hf_tiny import tiny_folder

    folder = tiny_folder("bert", tmp_path / "evil-bert")
    doc = json.loads((folder / "tokenizer.json").read_text("utf-8"))
    (folder / "tokenizer.json").write_text(json.dumps({**doc, "pre_tokenizer": BACKTRACKS}))
    pick_hf_zip(tab, server, "evil-bert.zip", _zip(folder))
    start = time.monotonic()
    tab.get_by_role("button", name="Validate and add").first.click()
    refusal = tab.locator('[data-testid="stAlertContentError"]', has_text="pre-tokenizer Split")
    refusal.wait_for(timeout=30_000)  # seconds, not a spinner forever
    tab.wait_for_selector(IDLE, timeout=30_000)
    seconds = time.monotonic() - start
    message = refusal.inner_text()
    assert "is not accepted" in message and "BertPreTokenizer" in message
    assert not tab.get_by_text("Added upload-evil-bert", exact=False).count()
    assert not tab.locator('[data-testid="stSpinner"]').count()
    print(f"refused in {seconds:.1f} s: {message}")
    tab.screenshot(path=str(shots / "upload-hostile-tokenizer.png"), full_page=True)
