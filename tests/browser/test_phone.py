"""A visitor on a 390 x 844 phone: the sidebar stays closed, the explorer's knobs sit in the page
above the numbers and the histogram, and Compare's maps and titles are readable."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

import pytest

from tests.browser.test_browser import settle
from tests.helpers import copy_shipped
from uqcore.knobs import TAU_GRID
from uqlab.catalog.tasks import DEFAULT_CHECKPOINT, PAPER_CHECKPOINT

pytestmark = pytest.mark.browser
PHONE = {"width": 390, "height": 844}
ROW = ".st-key-main_knobs"  # ui.sidebar.knob_row's container (keys.MAIN_ROW)
MAPS = '[class*="st-key-cmp_maps"] .js-plotly-plot'  # Compare's grid of maps (keys.CMP_MAPS)
COMPARED = (PAPER_CHECKPOINT, "cola-sto", "cola-trans", "cola-bam")
SENTENCE = "/compare?ckpt=cola-hsto&text=John%20is%20tall%20on%20several%20occasions.&label=0"


@pytest.fixture(scope="module")
def phone_server(tmp_path_factory):
    """The first-screen model and four word-level CoLA ones (Compare samples each)."""
    from tests.browser.conftest import start_server

    folder = tmp_path_factory.mktemp("phone")
    copy_shipped({DEFAULT_CHECKPOINT, *COMPARED}, folder)
    url, stop = start_server(folder, tmp_path_factory.mktemp("log") / "phone.log")
    yield url
    stop()


@pytest.fixture()
def screen(chrome, request):
    """A page at the viewport ``request.param`` (a phone's by default)."""
    size = getattr(request, "param", PHONE)
    context = chrome.new_context(viewport=size)
    page = context.new_page()
    page.set_default_timeout(120_000)
    yield page
    context.close()


def box(locator) -> dict:
    return locator.bounding_box()


def within(b: dict, height: int) -> bool:
    """Whether the box ``b`` lies wholly inside a viewport ``height`` px tall (to a pixel)."""
    return b["y"] >= -1 and b["y"] + b["height"] <= height + 1


def overlap(a: dict, b: dict) -> bool:
    return not (
        a["x"] + a["width"] <= b["x"]
        or b["x"] + b["width"] <= a["x"]
        or a["y"] + a["height"] <= b["y"]
        or b["y"] + b["height"] <= a["y"]
    )


def texts_overlapping(page, chart) -> list[tuple[str, str]]:
    """Pairs of texts that overlap in ``chart``: its title and the names above its panels."""
    texts = chart.locator(".gtitle, .annotation-text")
    found = [(texts.nth(i).text_content(), box(texts.nth(i))) for i in range(texts.count())]
    return [
        (a, b)
        for i, (a, ba) in enumerate(found)
        for b, bb in found[i + 1 :]
        if ba and bb and overlap(ba, bb)
    ]


def test_on_a_phone_a_knob_in_the_page_changes_the_figure_in_view(phone_server, screen, shots):
    """The landing at 390 x 844: the sidebar is closed, yet tau2 sits in the page with the
    numbers and the histogram under it, all three on one screen; moving it changes them and the
    link, and the sidebar's own tau2 follows."""
    page = screen
    page.goto(phone_server + "/")
    page.locator('[data-testid="stMetricValue"]').first.wait_for()
    settle(page)
    assert box(page.locator('[data-testid="stSidebar"]'))["width"] == 0  # closed on a phone
    hist = page.locator(".js-plotly-plot").first
    hist.evaluate("e => e.scrollIntoView({block: 'end'})")
    page.wait_for_timeout(500)
    knob = page.locator(f'{ROW} input[type="range"][aria-label^="tau2"]')
    metric = page.locator('[data-testid="stMetricValue"]').first
    for shown in (knob, metric, hist):
        assert within(box(shown), PHONE["height"]), (box(shown), box(hist))
    before = (metric.inner_text(), hist.locator(".annotation-text").all_text_contents())
    start = knob.get_attribute("aria-valuetext")
    page.screenshot(path=str(shots / "phone-knobs-before-390x844.png"))
    for _ in range(2):  # the second press may come mid-run: press the fresh copy (see below)
        knob.last.press("ArrowLeft")
    page.wait_for_timeout(800)
    settle(page)
    knob = page.locator(f'{ROW} input[type="range"][aria-label^="tau2"]')
    now = knob.get_attribute("aria-valuetext")
    assert float(now) < float(start)
    assert (metric.inner_text(), hist.locator(".annotation-text").all_text_contents()) != before
    for shown in (knob, metric, hist):  # nothing jumped: still one screen
        assert within(box(shown), PHONE["height"]), box(shown)
    assert float(parse_qs(urlparse(page.url).query)["tau2"][0]) == float(now)
    side = page.locator('[data-testid="stSidebar"] input[type="range"][aria-label^="tau2"]')
    assert side.get_attribute("aria-valuetext") == now
    page.screenshot(path=str(shots / "phone-knobs-after-390x844.png"))


@pytest.mark.parametrize("screen", [{"width": 1400, "height": 1000}], indirect=True)
def test_on_a_wide_screen_the_knobs_stay_in_the_sidebar_alone(phone_server, screen):
    page = screen
    page.goto(phone_server + "/")
    page.locator('[data-testid="stMetricValue"]').first.wait_for()
    settle(page)
    assert page.locator(ROW).count() == 1 and not page.locator(ROW).is_visible()
    wrapper = page.locator(f'[data-testid="stLayoutWrapper"]:has(> {ROW})')  # its gap too
    assert wrapper.evaluate("e => getComputedStyle(e).display") == "none"
    assert box(page.locator('[data-testid="stSidebar"]'))["width"] > 200


@pytest.mark.parametrize(
    ("screen", "across"),
    [(PHONE, 1), ({"width": 1024, "height": 768}, 2), ({"width": 1400, "height": 1000}, 3)],
    indirect=["screen"],
)
def test_compare_maps_are_wide_enough_and_no_title_overlaps(phone_server, screen, across, shots):
    """One map a checkpoint, at least 300 px wide on a phone (one a row) and 270 px beside the
    sidebar (two or three a row); no chart's title or panel name runs into another."""
    page = screen
    page.goto(phone_server + SENTENCE + "&T=10&seed=1")
    page.locator(MAPS).first.wait_for()
    settle(page)
    maps = page.locator(MAPS)
    assert maps.count() == len(COMPARED)
    boxes = [box(maps.nth(i)) for i in range(maps.count())]
    assert min(b["width"] for b in boxes) >= (300 if across == 1 else 270), boxes
    first_row = [b for b in boxes if abs(b["y"] - boxes[0]["y"]) < 1]
    assert len(first_row) == across, boxes
    charts = page.locator(".js-plotly-plot")
    for i in range(charts.count()):
        assert not texts_overlapping(page, charts.nth(i)), texts_overlapping(page, charts.nth(i))
    size = page.viewport_size
    page.screenshot(path=str(shots / f"phone-compare-{size['width']}x{size['height']}.png"))


def test_rapid_presses_on_a_copy_agree_with_the_sidebar_and_the_link(phone_server, screen, shots):
    """Issue 45 item 12: a visitor focuses the in-page tau2 and presses an arrow key four times,
    faster than the runs the presses start, four rounds back and forth. Every press counts (the
    thumb moves four steps of the grid), the thumb keeps the keyboard focus, and the thumb, the
    sidebar's tau2 and the link end on one value (a copy redrawn at every value lost its focus
    after one press, and once left the thumb at 0.5 with 0.2 in the link)."""
    page = screen
    page.goto(phone_server + f"/?ckpt={DEFAULT_CHECKPOINT}&tau2=0.2")
    page.locator('[data-testid="stMetricValue"]').first.wait_for()
    settle(page)
    copy = page.locator(f'{ROW} input[type="range"][aria-label^="tau2"]')
    side = page.locator('[data-testid="stSidebar"] input[type="range"][aria-label^="tau2"]')
    grid = [float(v) for v in TAU_GRID]
    for rounds, (key, step, gap) in enumerate(
        [("ArrowRight", 4, 40), ("ArrowLeft", -4, 150), ("ArrowRight", 4, 0), ("ArrowLeft", -4, 60)]
    ):
        assert copy.count() == 1
        start = float(copy.get_attribute("aria-valuetext"))
        copy.focus()
        for _ in range(4):
            page.keyboard.press(key)
            page.wait_for_timeout(gap)
        for _ in range(2):  # idle twice: a press may start its run just after the first
            page.wait_for_timeout(1200)
            settle(page)
        assert copy.count() == 1
        shown = float(copy.get_attribute("aria-valuetext"))
        assert shown == grid[grid.index(start) + step], (rounds, start, shown)
        assert copy.evaluate("e => e === document.activeElement"), rounds  # still focused
        assert float(side.get_attribute("aria-valuetext")) == shown, rounds
        assert float(parse_qs(urlparse(page.url).query)["tau2"][0]) == shown, (rounds, page.url)
    page.screenshot(path=str(shots / "phone-rapid-presses-390x844.png"))
