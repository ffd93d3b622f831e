"""Issue 45's walk, items 14-17, in Chromium at 1400x1000, a projector's 1024x768 and a phone's
390x844: readable colour bars on the fixed scale, finished work that looks finished, the phone's
first screen with a result, and plotly's toolbar off a phone's titles."""

from __future__ import annotations

import pytest

from tests.browser.test_browser import settle
from tests.helpers import copy_shipped
from uqlab.catalog.tasks import DEFAULT_CHECKPOINT, PAPER_CHECKPOINT

pytestmark = pytest.mark.browser
SIZES = [
    {"width": 1400, "height": 1000},
    {"width": 1024, "height": 768},
    {"width": 390, "height": 844},
]
SHIPPED = (DEFAULT_CHECKPOINT, PAPER_CHECKPOINT, "cola-trans")
FLAT = "/?ckpt=cola-hsto&text=John%20is%20tall%20on%20several%20occasions.&label=0&T=50&tau2=50"


@pytest.fixture(scope="module")
def edges_server(tmp_path_factory):
    from tests.browser.conftest import start_server

    folder = tmp_path_factory.mktemp("edges")
    copy_shipped(SHIPPED, folder)
    url, stop = start_server(folder, tmp_path_factory.mktemp("log") / "edges.log")
    yield url
    stop()


@pytest.fixture(params=SIZES, ids=lambda s: f"{s['width']}x{s['height']}")
def screen(chrome, request):
    context = chrome.new_context(viewport=request.param)
    page = context.new_page()
    page.set_default_timeout(120_000)
    yield page
    context.close()


def _size(page) -> str:
    size = page.viewport_size
    return f"{size['width']}x{size['height']}"


def _overlapping(boxes: list[dict]) -> bool:
    ordered = sorted(boxes, key=lambda b: b["x"])
    return any(a["x"] + a["width"] > b["x"] for a, b in zip(ordered, ordered[1:], strict=False))


def test_colour_bars_are_wide_with_level_ticks_on_the_fixed_scale(edges_server, screen, shots):
    """Item 14: at tau2 = 50 (a near-uniform map) the explorer opens with auto-scale off; each
    map's bar lies flat under it, most of the map's width, its ticks level and apart."""
    page = screen
    page.goto(edges_server + FLAT)
    std = page.locator(".st-key-fig_attention_std .js-plotly-plot")
    std.wait_for()
    settle(page)
    toggle = page.locator(".st-key-att_auto input").first  # "Auto-scale the colours"
    assert not toggle.is_checked()
    for key in ("fig_attention", "fig_attention_mean", "fig_attention_std"):
        chart = page.locator(f".st-key-{key} .js-plotly-plot")
        chart.scroll_into_view_if_needed()
        page.wait_for_timeout(1000)  # plotly draws at a first width, then fits its column
        bar = chart.locator(".colorbar .cbfills").first.bounding_box()
        whole = chart.locator(".main-svg").first.bounding_box()  # the figure
        # about 110 px of colours at every size, inside the figure (it was 16 px at 1024)
        assert bar["width"] >= 90, (key, bar)
        assert whole["x"] <= bar["x"] and bar["x"] + bar["width"] <= whole["x"] + whole["width"]
        ticks = [t.bounding_box() for t in chart.locator(".colorbar .cbaxis text").all()]
        assert len(ticks) == 3 and not _overlapping(ticks), ticks
        assert all(t["height"] < 20 for t in ticks), ticks  # level: a rotated label is tall
    texts = page.locator(".st-key-fig_attention_std .colorbar .cbaxis text").all_text_contents()
    assert texts == ["0", "0.25", "0.5"]
    page.get_by_text("Attention, sample by sample").scroll_into_view_if_needed()
    page.screenshot(path=str(shots / f"edges-colour-bars-{_size(page)}.png"))


def test_finished_work_shows_no_bar_and_no_cancel(edges_server, screen, shots):
    """Item 15: after Error analysis finishes a recomputation (seed 1: not the stored seed),
    no progress bar and no Cancel stay (the "done in" line: tests/app/test_work.py)."""
    page = screen
    page.goto(edges_server + "/errors?ckpt=cola-hsto&seed=1&T=10")
    page.get_by_role("button", name="Compute").click()
    page.locator('[data-testid="stDataFrame"]').first.wait_for()
    settle(page)
    assert page.get_by_role("button", name="Cancel").count() == 0
    assert page.locator('[data-testid="stProgress"]').count() == 0
    page.screenshot(path=str(shots / f"edges-errors-done-{_size(page)}.png"), full_page=False)


def test_the_landing_shows_a_result_on_the_first_screen(edges_server, screen, shots):
    """Item 17: at 390x844 the landing's stories sat one under another, each with its
    caption, and the first number was under the fold. Now the first result's number is on
    the first screen at every size, without scrolling."""
    page = screen
    page.goto(edges_server + "/")
    metric = page.locator('[data-testid="stMetricValue"]').first
    metric.wait_for()
    settle(page)
    assert page.evaluate("window.scrollY") == 0
    b = metric.bounding_box()
    assert b["y"] >= 0 and b["y"] + b["height"] <= page.viewport_size["height"], b
    tales = page.locator(".st-key-landing_tales")
    titles = ("Sure of it", "Unsure", "Out of domain")
    boxes = [tales.get_by_role("button", name=t).first.bounding_box() for t in titles]
    assert all(abs(b["y"] - boxes[0]["y"]) < 2 for b in boxes), boxes  # side by side
    page.screenshot(path=str(shots / f"edges-landing-{_size(page)}.png"))


def test_plotly_toolbar_never_covers_a_title_on_a_phone(edges_server, screen, shots):
    """Item 17: on a phone plotly's toolbar sat over Compare's title; it is hidden there, and
    kept on wider screens."""
    page = screen
    page.goto(
        edges_server + "/compare?ckpt=cola-hsto&text=John%20is%20tall%20on%20several%20occasions."
        "&label=0&T=10&seed=1"
    )
    chart = page.locator(".js-plotly-plot").first
    chart.wait_for()
    settle(page)
    shown = chart.locator(".modebar-container").evaluate("e => getComputedStyle(e).display")
    phone = page.viewport_size["width"] <= 640
    assert (shown == "none") is phone, shown
    chart.scroll_into_view_if_needed()
    page.screenshot(path=str(shots / f"edges-compare-{_size(page)}.png"))
