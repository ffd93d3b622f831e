"""A researcher's own labelled file: uploaded once on Error analysis, then used on Results and the
temperature sweep of the same session without a second upload; its summary line's numbers are
uqcore.stats' on the rows the page downloads (1400x1000, a projector's 1024x768, a phone)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest

from tests.browser.test_browser import csv_rows, settle, wait_title
from ui.logic.exports import read_header
from uqcore import stats

pytestmark = pytest.mark.browser

ROWS = [
    ("The cat slept.", "yes"),
    ("She reads books every day.", "yes"),
    ("Books reads she the.", "no"),
    ("The dog chased the cat.", "yes"),
    ("Him went home quickly.", "no"),
    ("They is happy.", "no"),
    ("A boy ran to school.", "yes"),
    ("We saw a film yesterday.", "yes"),
    ("Cat the the the.", "no"),
    ("John is tall on several occasions.", "no"),
]
CSV = "sentence,judgement\n" + "".join(f"{t},{y}\n" for t, y in ROWS)
LINE = re.compile(
    r"your file: (\d+) rows · accuracy ([\d.]+) \[([\d.]+), ([\d.]+)\] · "
    r"ECE ([\d.]+) \[([\d.]+), ([\d.]+)\]"
)


def nav(page, title: str) -> None:
    """Go to a page by the menu, as a visitor does (on a phone the menu is behind a button)."""
    link = page.get_by_role("link", name=title)
    if not on_screen(link):
        page.locator('[data-testid="stExpandSidebarButton"]').click()
        page.wait_for_timeout(600)  # the menu slides in
    link.click()
    settle(page)
    close = page.locator('[data-testid="stSidebarCollapseButton"] button')
    if page.viewport_size["width"] < 640 and close.count():  # the menu covers a phone's page
        close.first.click()
        page.wait_for_timeout(600)


def on_screen(locator) -> bool:
    """Whether the element is drawn inside the window (a closed menu is moved off-screen)."""
    box = locator.bounding_box() if locator.count() else None
    return bool(box) and box["x"] + box["width"] > 0 and box["width"] > 0


def summary_of(rows: list[dict]) -> list[float]:
    """Accuracy and ECE with their bootstrap intervals (seed 1, the page's seed) of a
    downloaded CSV's mean predictions, as the page's summary line gives them."""
    p = np.array([[float(r["p@0"]), float(r["p@1"])] for r in rows])  # [N, 2]
    y = np.array([int(r["gold"]) for r in rows])  # [N]
    acc = stats.bootstrap_interval(stats.accuracy, p, y, seed=1)
    ece = stats.bootstrap_interval(stats.ece, p, y, seed=1)
    return [acc.value, acc.low, acc.high, ece.value, ece.low, ece.high]


def kept_here(page) -> None:
    """The file from the earlier page is in use: named, with no uploader asking for it again."""
    page.get_by_text("kept for this session", exact=False).first.wait_for()
    assert page.get_by_text("mine.csv", exact=False).first.is_visible()
    assert page.locator('[data-testid="stFileUploaderDropzoneInput"]').count() == 1  # OOD only


@pytest.mark.parametrize(("width", "height"), [(1400, 1000), (1024, 768), (390, 844)])
def test_your_file_is_uploaded_once_and_reported_on_every_dataset_page(
    chrome, server, shots, width, height
):
    context = chrome.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(180_000)
    try:
        page.goto(f"{server}/errors?ckpt=cola-hsto&T=10&seed=1")
        page.get_by_text("your labelled file").click()
        settle(page)
        upload = {"name": "mine.csv", "mimeType": "text/csv", "buffer": CSV.encode()}
        page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(upload)
        settle(page)
        kept_here(page)
        for value, name in (("yes", "acceptable"), ("no", "unacceptable")):
            box = page.locator('[data-testid="stSelectbox"]', has_text=f"{value} is")
            box.scroll_into_view_if_needed()  # a list opened while the page scrolls closes
            page.wait_for_timeout(300)
            box.click()
            page.get_by_role("option", name=name, exact=True).click()
            settle(page)
        page.get_by_role("button", name="Compute").click()
        page.get_by_text("your file:", exact=False).first.wait_for()
        settle(page)
        shown = LINE.search(page.get_by_text("your file:", exact=False).first.inner_text())
        assert shown, "no summary line"
        assert int(shown.group(1)) == len(ROWS)
        page.screenshot(path=str(shots / f"your-file-errors-{width}.png"), full_page=True)
        # the summary is uqcore.stats' on the rows this page downloads, at the settings written
        # in the same file (one computation: a CI run once showed the sidebar's temperatures at
        # 0.05 on this deep link, so another page's numbers are not the reference)
        with page.expect_download() as info:
            page.get_by_role("button", name="Download these rows (CSV)").click()
        errors_csv = info.value.path()
        settings = read_header(Path(errors_csv).read_text(encoding="utf-8"))
        assert (settings["checkpoint"], settings["T"], settings["seed"]) == ("cola-hsto", "10", "1")
        # the page lists them sorted by a score; the summary's bootstrap draws them in file order
        mine = sorted(csv_rows(errors_csv), key=lambda r: int(r["index"]))
        assert len(mine) == len(ROWS) and {r["domain"] for r in mine} == {"your file"}
        assert [float(v) for v in shown.groups()[1:]] == pytest.approx(
            summary_of(mine), abs=5e-4
        ), settings

        nav(page, "Results")
        kept_here(page)  # the same file, its labels mapped as before: no second upload
        page.get_by_role("button", name="Compute").click()
        page.get_by_text("On mine.csv").wait_for()
        wait_title(page, "Reliability diagram")
        settle(page)
        page.get_by_text("Your file has no out-of-domain part", exact=False).wait_for()
        page.screenshot(path=str(shots / f"your-file-results-{width}.png"), full_page=True)
        with page.expect_download() as info:
            page.get_by_role("button", name="Download the per-example values (CSV)").click()
        rows = [r for r in csv_rows(info.value.path()) if r["checkpoint"] == "cola-hsto"]
        assert len(rows) == len(ROWS) and {r["domain"] for r in rows} == {"your file"}
        # the same texts with the same gold labels: the mapping made once serves both pages
        assert sorted((r["text"], r["gold"]) for r in rows) == sorted(
            (r["text"], r["gold"]) for r in mine
        )

        nav(page, "Temperature sweep")
        kept_here(page)
        page.get_by_role("button", name="Run the sweep").click()
        wait_title(page, "at inference")
        settle(page)
        page.locator(".js-plotly-plot .legendtext", has_text="your file").first.wait_for()
        assert page.get_by_text("mine.csv", exact=False).first.is_visible()
        page.screenshot(path=str(shots / f"your-file-sweep-{width}.png"), full_page=True)
    finally:
        context.close()


def chips(page) -> list[str]:
    """The checkpoints the Results page's Checkpoints box shows (its tags, in order)."""
    tags = page.locator('[data-testid="stMultiSelect"]', has_text="Checkpoints").locator(
        ".react-aria-ComboBox [data-tag]"
    )
    return [tags.nth(i).get_attribute("aria-label") for i in range(tags.count())]


@pytest.mark.parametrize(("width", "height"), [(1400, 1000), (1024, 768), (390, 844)])
def test_results_keeps_its_checkpoints_when_the_examples_switch_to_your_file_and_back(
    chrome, server, shots, width, height
):
    """Issue 45 item 13: switching "Examples" to "your labelled file" emptied the Checkpoints
    box, and it stayed empty after switching back (T went back to 10 too)."""
    context = chrome.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(180_000)
    try:
        page.goto(f"{server}/results?ckpt=cola-hsto&T=10&seed=1")
        page.get_by_text("your labelled file").wait_for()
        settle(page)
        before = chips(page)
        assert before and before[0] == "cola-hsto", before
        samples = page.get_by_label("T", exact=True)
        samples.fill("7")
        samples.press("Enter")
        settle(page)
        mine, bundled = page.get_by_text("your labelled file"), page.get_by_text("the bundled")
        for step in range(2):  # no file yet (the page stops before the box), then a file
            mine.click()
            settle(page)
            if step == 1:
                numbered = "sentence,label\n" + "".join(f"{t},{int(y == 'yes')}\n" for t, y in ROWS)
                upload = {"name": "mine.csv", "mimeType": "text/csv", "buffer": numbered.encode()}
                page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(
                    upload
                )  # labels 0 / 1: mapped at once, so the page goes on to the box
                settle(page)
                kept_here(page)
                assert chips(page) == before, step  # on the file too
            bundled.click()
            settle(page)
            assert chips(page) == before, step
            assert page.get_by_label("T", exact=True).input_value() == "7", step
        box = page.locator('[data-testid="stMultiSelect"]', has_text="Checkpoints")
        box.scroll_into_view_if_needed()
        page.screenshot(path=str(shots / f"results-source-back-{width}x{height}.png"))
    finally:
        context.close()
