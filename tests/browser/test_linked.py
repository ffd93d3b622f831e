"""From an aggregate figure to its examples (ui.linked, issue 49 item 1), in Chromium at
1400x1000, a projector's 1024x768 and a phone: a reliability marker and a risk-coverage point
on Results and a row of Error analysis's slices each open Error analysis on exactly the rows the
library puts there (their count and indices checked against uqcore.stats on the per-example
values Results downloads), and the address bar's link reopens them in a fresh browser."""

from __future__ import annotations

import re
from urllib.parse import unquote

import numpy as np
import pandas as pd
import pytest

from tests.browser.test_browser import csv_rows, settle
from uqcore.stats import reliability_diagram, risk_coverage
from uqlab.workbench import slices
from uqlab.workbench.dataset import OUT

pytestmark = pytest.mark.browser

POINT = """([title, curve, index]) => {
  const gd = [...document.querySelectorAll('.js-plotly-plot')]
    .find(g => g.querySelector('.gtitle') && g.querySelector('.gtitle').textContent
      .startsWith(title));
  const tr = gd._fullData[curve], L = gd._fullLayout, box = gd.getBoundingClientRect();
  const x = L.xaxis.l2p(tr.x[index]) + L._size.l + box.left;
  const y = L.yaxis.l2p(tr.y[index]) + L._size.t + box.top;
  return [x, y, tr.name, tr.customdata ? tr.customdata[index] : null];
}"""
CELL = POINT.replace("l2p(tr.x[index])", "d2p(tr.x[index])").replace(
    "l2p(tr.y[index])", "d2p(tr.y[index])"
)  # a category axis: data to pixels
SAID = re.compile(r"Selected: (.*): ([\d,]+) texts, ([\d,]+) wrong\.")


def _results(page, server: str) -> None:
    """Results on the bundled CoLA examples, computed (Compute pressed when it asks)."""
    page.goto(f"{server}/results?ckpt=cola-hsto&seed=0")
    page.get_by_role("button", name="Compute").wait_for()
    settle(page)
    if page.get_by_text("Press Compute", exact=False).count():
        page.get_by_role("button", name="Compute").click()
    page.get_by_text("Risk-coverage", exact=False).first.wait_for()
    settle(page)


def _click_point(
    page, title: str, curve: int, index: int, script: str = POINT
) -> tuple[str, list | None]:
    """Click point ``index`` of trace ``curve`` of the chart titled ``title`` (scrolled into
    view first); the trace's name and the point's customdata. ``script``: :data:`CELL` for a
    chart whose axes are categories."""
    chart = page.locator(".js-plotly-plot", has=page.locator(".gtitle", has_text=title[:20]))
    chart.first.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    x, y, name, data = page.evaluate(script, [title, curve, index])
    page.mouse.move(x, y)
    page.wait_for_timeout(300)
    page.mouse.click(x, y)
    page.get_by_role("button", name="Open in Error analysis", exact=False).first.wait_for()
    settle(page)  # the rerun the click started has finished
    return name, data


def _open_errors(page) -> tuple[str, int, int]:
    """Press the "Open in Error analysis" button; what Error analysis says it selected."""
    button = page.get_by_role("button", name="Open in Error analysis", exact=False).first
    button.wait_for(timeout=120_000)
    button.click()
    return _selected(page)


def _selected(page) -> tuple[str, int, int]:
    info = page.get_by_text("Selected:", exact=False).first
    info.wait_for(timeout=180_000)
    settle(page)
    got = SAID.search(info.inner_text())
    assert got, info.inner_text()
    return got.group(1), int(got.group(2).replace(",", "")), int(got.group(3).replace(",", ""))


def _rows_shown(page) -> int:
    caption = page.get_by_text(re.compile(r"^[\d,]+ of [\d,]+ examples\.$")).first
    return int(caption.inner_text().split(" of ")[0].replace(",", ""))


def _frame_of(page, tmp_path, name: str) -> list[dict]:
    """Results' per-example values (its CSV download) of checkpoint ``name``, in-domain."""
    settle(page)
    with page.expect_download() as got:
        page.get_by_role("button", name="Download the per-example values (CSV)").click()
    path = tmp_path / "rows.csv"
    got.value.save_as(path)
    rows = [r for r in csv_rows(path) if r["checkpoint"] == name.split(" (AU")[0]]
    return [r for r in rows if r["domain"] != OUT]


def _frame_of_ood(page, tmp_path, name: str) -> list[dict]:
    """Results' per-example values of checkpoint ``name``, out of domain."""
    settle(page)
    with page.expect_download() as got:
        page.get_by_role("button", name="Download the per-example values (CSV)").click()
    got.value.save_as(tmp_path / "rows-ood.csv")
    rows = csv_rows(tmp_path / "rows-ood.csv")
    rows = [r for r in rows if r["checkpoint"] == name.split(" (AU")[0]]
    return [r for r in rows if r["domain"] == OUT]


def _downloaded(page, tmp_path, file: str) -> list[dict]:
    """Error analysis's rows as its "Download these rows (CSV)" gives them."""
    settle(page)
    with page.expect_download() as got:
        page.get_by_role("button", name="Download these rows (CSV)").click()
    got.value.save_as(tmp_path / file)
    return csv_rows(tmp_path / file)


def _probs(rows: list[dict]) -> tuple[np.ndarray, np.ndarray]:
    p = np.array([[float(r["p@0"]), float(r["p@1"])] for r in rows])  # [N, 2]
    return p, np.array([int(r["gold"]) for r in rows])


@pytest.mark.parametrize(("width", "height"), [(1400, 1000), (1024, 768), (390, 844)])
def test_a_bin_a_coverage_point_and_a_slice_open_their_rows(
    chrome, server, shots, tmp_path, width, height
):
    context = chrome.new_context(viewport={"width": width, "height": height})
    page = context.new_page()
    page.set_default_timeout(180_000)
    _results(page, server)

    # a reliability marker: the library's bin of the per-example values Results downloads
    name, data = _click_point(page, "Reliability diagram", 1, 0)
    rows = _frame_of(page, tmp_path, name)
    p, y = _probs(rows)
    rd = reliability_diagram(p, y)
    b = int(data[1])
    what, n, wrong = _open_errors(page)
    assert what.startswith("confidence in [") and n == rd.count[b] == _rows_shown(page)
    in_bin = np.minimum((p.max(1) * 15).astype(int), 14) == b
    assert wrong == int((p[in_bin].argmax(1) != y[in_bin]).sum())
    shown = {(r["domain"], r["index"]) for r in _downloaded(page, tmp_path, "bin.csv")}
    assert shown == {
        (r["domain"], r["index"]) for r, inside in zip(rows, in_bin, strict=True) if inside
    }
    page.screenshot(path=str(shots / f"linked-bin-{width}x{height}.png"))
    link = page.url
    assert "sel=bin" in link

    # the link in a fresh browser: the same rows
    fresh = chrome.new_context(viewport={"width": width, "height": height}).new_page()
    fresh.set_default_timeout(180_000)
    fresh.goto(link)
    assert _selected(fresh) == (what, n, wrong)
    fresh.context.close()

    # a risk-coverage point: the k most confident in the library's order
    _results(page, server)
    name, _ = _click_point(page, "Risk-coverage", 0, 39)  # coverage 40 / N
    rows = _frame_of(page, tmp_path, name)
    p, y = _probs(rows)
    rc = risk_coverage(p, y)
    what, n, wrong = _open_errors(page)
    k = int(re.match(r"the ([\d,]+) most confident", what).group(1).replace(",", ""))
    assert abs(k - 40) <= 3  # the point under the mouse (on a phone, points are a pixel apart)
    assert n == k == _rows_shown(page) and wrong == round(rc.risk[k - 1] * k)
    order = np.argsort(-p.max(1), kind="stable")[:k]  # as uqcore.stats.risk_coverage keeps them
    shown = {(r["domain"], r["index"]) for r in _downloaded(page, tmp_path, "top.csv")}
    assert shown == {(rows[i]["domain"], rows[i]["index"]) for i in order}

    # a point of the ROC curve: every text its threshold flags, in both domains
    _results(page, server)
    name, _ = _click_point(page, "Out-of-domain detection", 1, 20)
    rows = _frame_of(page, tmp_path, name) + _frame_of_ood(page, tmp_path, name)
    what, n, wrong = _open_errors(page)
    assert what.startswith("flagged by mutual information ≥ ")
    threshold = float(unquote(page.url).split("mutual_information:")[1].split("|")[0])
    assert n == sum(float(r["mi"]) >= threshold for r in rows) == _rows_shown(page)

    # a bar of a histogram by domain: that domain's rows in the bar's range
    _results(page, server)
    chart = page.locator(
        ".js-plotly-plot", has=page.locator(".gtitle", has_text="cola-hsto: mutual")
    )
    chart.first.scroll_into_view_if_needed()
    page.wait_for_timeout(500)
    chart.first.locator(".trace.bars").first.locator(".point path").nth(1).click(force=True)
    page.get_by_role("button", name="Open in Error analysis", exact=False).first.wait_for()
    settle(page)
    rows = _frame_of(page, tmp_path, "cola-hsto") + _frame_of_ood(page, tmp_path, "cola-hsto")
    what, n, wrong = _open_errors(page)
    got = re.match(r"mutual information in \[([\d.e-]+), ([\d.e-]+)\), (.+)$", what)
    assert got, what
    shown = _downloaded(page, tmp_path, "bar.csv")
    assert len(shown) == n == _rows_shown(page)
    assert {r["domain"] for r in shown} == {got.group(3)}
    low, high = float(got.group(1)), float(got.group(2))  # as said, to 3 figures
    mi = np.array([float(r["mi"]) for r in shown])
    assert (mi >= low * 0.999).all() and (mi < high * 1.001).all()
    same = [r for r in rows if r["domain"] == got.group(3)]
    edges = np.array([float(r["mi"]) for r in same])
    assert n == int(((edges >= mi.min()) & (edges <= mi.max())).sum())  # none left out

    # a cell of the confusion matrix: the in-domain rows of that gold label and prediction
    _results(page, server)
    _, data = _click_point(page, "cola-hsto: confusion", 1, 1, CELL)  # gold 0, predicted 1
    gold, pred = int(data[0]), int(data[1])
    rows = _frame_of(page, tmp_path, "cola-hsto")
    what, n, wrong = _open_errors(page)
    names = ("unacceptable", "acceptable")
    assert what.startswith(f"gold {names[gold]}, predicted {names[pred]}"), what
    inside = [r for r in rows if int(r["gold"]) == gold and int(r["pred"]) == pred]
    assert n == len(inside) == _rows_shown(page) and wrong == (n if gold != pred else 0)
    shown = {(r["domain"], r["index"]) for r in _downloaded(page, tmp_path, "cell.csv")}
    assert shown == {(r["domain"], r["index"]) for r in inside}
    assert "sel=cell" in page.url

    # a slice of Error analysis's table: its rows, as uqlab.workbench.slices groups them
    page.get_by_role("button", name="Show every row").click()
    settle(page)
    every = pd.DataFrame(_downloaded(page, tmp_path, "all.csv"))
    grid = page.locator('[data-testid="stDataFrame"]').last
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    page.mouse.click(box["x"] + 18, box["y"] + 35 + 18)  # the first slice's row
    what, n, wrong = _selected(page)
    assert what.startswith("slice length = ")
    group = slices.groups(every, "length", ("unacceptable", "acceptable"))
    inside = every[group == what.removeprefix("slice length = ")]
    assert n == len(inside) and wrong == int((inside["pred"] != inside["gold"]).sum())
    shown = {(r["domain"], r["index"]) for r in _downloaded(page, tmp_path, "slice.csv")}
    assert shown == set(zip(inside["domain"], inside["index"], strict=True))
    page.screenshot(path=str(shots / f"linked-slice-{width}x{height}.png"))
    context.close()
