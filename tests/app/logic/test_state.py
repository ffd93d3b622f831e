"""URL state (ui.logic.state): a view round-trips through the URL, old links still open, bad
values are explained, and the one URL builder (explorer_url) reopens the same view."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import parse_qsl, urlparse

from ui.logic.state import MAX_T, ViewState, explorer_url, parse, to_params

ROOT = Path(__file__).resolve().parents[3]


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
    state = ViewState(
        ckpt="cola-hsto", text="John is tall on several occasions.", label=0, T=50, seed=1
    )
    assert explorer_url(state) == (
        "/?ckpt=cola-hsto&text=John+is+tall+on+several+occasions.&label=0&T=50&seed=1"
    )


def test_no_page_builds_a_url_by_hand() -> None:
    for page in sorted((ROOT / "app_pages").glob("*.py")):
        text = page.read_text()
        assert "urlencode" not in text and '"/?"' not in text, page.name


def test_state_round_trips_through_the_url():
    state = ViewState(
        ckpt="cola-hsto",
        text="John is tall.",
        label=0,
        T=77,
        seed=5,
        tau1=0.123456789,
        tau2=40.0,
        noise_scale=0.5,
        bam_mode="mean",
        em_iterations=3,
        dropout=0.2,
        scaled=True,
    )
    back, notes = parse(to_params(state), ["cola-hsto"], None)
    assert back == state and notes == []
    # one name per knob, from the widget to the kernel: the URL keys are the library's names
    assert {"noise_scale", "bam_mode", "em_iterations"} <= set(to_params(state))
    settings = state.overrides()
    assert (settings.noise_scale, settings.bam_mode, settings.em_iterations) == (0.5, "mean", 3)


def test_links_made_before_the_rename_still_open_the_same_view():
    state, notes = parse({"noise": "0.5", "bam": "mean", "em": "3"}, ["a"], "a")
    assert (state.noise_scale, state.bam_mode, state.em_iterations) == (0.5, "mean", 3)
    assert notes == []


def test_missing_values_take_defaults_and_bad_ones_are_explained():
    state, notes = parse(
        {"T": "0", "seed": "-4", "tau2": "nan", "noise_scale": "900", "em_iterations": "x"},
        ["a"],
        "a",
    )
    assert state.ckpt == "a" and state.T == 1 and state.seed == 0
    # a link may set λ up to 100 (a zero-shot checkpoint ships at 16; its slider reaches it)
    assert state.tau2 is None and state.noise_scale == 100.0 and state.em_iterations is None
    assert len(notes) == 5
    state, notes = parse({"T": str(10 * MAX_T), "text": "x" * 30_000}, [], None)
    assert state.T == MAX_T and len(state.text) == 20_000 and len(notes) == 2
