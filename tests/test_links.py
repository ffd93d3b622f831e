"""The one URL builder (ui.logic.state.explorer_url): what the pages link to reopens the same
view."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlparse

from ui.logic.state import ViewState, explorer_url, parse

ROOT = Path(__file__).resolve().parent.parent


def _back(url: str) -> ViewState:
    parsed = urlparse(url)
    assert parsed.path == "/" and not parsed.netloc  # the explorer is the app's default page
    state, notes = parse(dict(parse_qsl(parsed.query)), ["cola-hsto", "cola-sto"], "cola-hsto")
    assert notes == []
    return state


def test_explorer_url_round_trips_through_parse() -> None:
    text = "John is tall on several occasions. & 50% ? #1 ünïcode"
    for state in (
        ViewState(ckpt="cola-hsto", text=text, label=0, T=50, seed=1),
        ViewState(ckpt="cola-sto", text="a", label=None, T=100, seed=0, tau2=0.3),
        ViewState(ckpt="cola-hsto", text="x y", label=1, T=7, seed=3, tau1=0.1, tau2=1 / 3),
    ):
        assert _back(explorer_url(state)) == state


def test_the_papers_link_reads_as_documented() -> None:
    state = ViewState(ckpt="cola-hsto", text="John is tall on several occasions.", label=0, T=50,
                      seed=1)  # fmt: skip
    assert explorer_url(state) == (
        "/?ckpt=cola-hsto&text=John+is+tall+on+several+occasions.&label=0&T=50&seed=1"
    )


def test_no_page_builds_a_url_by_hand() -> None:
    for page in sorted((ROOT / "app_pages").glob("*.py")):
        text = page.read_text()
        assert "urlencode" not in text and '"/?"' not in text, page.name
